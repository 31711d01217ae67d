/**
 * verifyJwt: one signed JWT checked by jose's own jwtVerify (alg allow-list, crit, signature, iss, exp and
 * nbf with tolerance), behind what jose does not check (screen-jws.ts), with the key chosen by Portier's
 * key store from the kid (never a key named in the token) and jose's refusals turned into TokenErrors.
 */
import { jwtVerify, type JWTHeaderParameters, type JWTPayload, type FlattenedJWSInput } from "jose";
import { TokenError } from "./token-error.js";
import { screenJws, isBase64url, critUnsupported } from "./screen-jws.js";
import { fromJoseError, type RefusalWording } from "./from-jose-error.js";
import type { KeyStore, ResolvedKey } from "./key-store.js";

export interface JwtRules extends RefusalWording {
  store: KeyStore;
  algorithms: string[];
  maxTokenBytes: number;
  clockToleranceSec: number;
  /** Seconds since the epoch. */
  now(): number;
  /** A rule of the caller on the protected header, checked before the signature (typ for access tokens). */
  checkHeader?: ((header: Record<string, unknown>) => void) | undefined;
}

export interface VerifiedJwt {
  header: JWTHeaderParameters;
  payload: JWTPayload;
  /** keyId() of the key that verified it. */
  kid: string;
}

/**
 * Portier's header rules jose does not have: no crit at all (jose accepts b64), a string kid, a base64url
 * signature.
 */
function checkBeforeKey(header: Record<string, unknown>, signature: string, rules: JwtRules): void {
  if (header.crit !== undefined) throw critUnsupported();
  if (header.kid !== undefined && typeof header.kid !== "string")
    throw new TokenError("token_malformed", "the header kid is not a string");
  rules.checkHeader?.(header);
  if (signature.length === 0 || !isBase64url(signature))
    throw new TokenError("signature_invalid", "the signature is missing or not base64url");
}

export async function verifyJwt(token: string, rules: JwtRules): Promise<VerifiedJwt> {
  screenJws(token, rules.maxTokenBytes);
  const choice = new KeyChoice(rules);
  const options = {
    issuer: rules.issuer,
    algorithms: rules.algorithms,
    clockTolerance: rules.clockToleranceSec,
    currentDate: new Date(rules.now() * 1000),
  };
  for (;;) {
    try {
      const { payload, protectedHeader } = await jwtVerify(
        token,
        (header: JWTHeaderParameters, jws: FlattenedJWSInput) => choice.key(header, jws),
        options,
      );
      return { header: protectedHeader, payload, kid: choice.kid };
    } catch (err) {
      const failed = fromJoseError(err, token, rules, choice.given);
      if (failed.code !== "signature_invalid" || !choice.next()) throw failed;
    }
  }
}

/**
 * The key resolver handed to jwtVerify: jose calls it after its own header checks (JSON, crit, alg allowed).
 * A token without kid may fit several of the issuer's keys: then each is tried in turn.
 */
class KeyChoice {
  private candidates: ResolvedKey[] | undefined;
  private index = 0;
  constructor(private readonly rules: JwtRules) {}

  get given(): boolean {
    return this.candidates !== undefined;
  }

  get kid(): string {
    return this.candidates![this.index]!.kid;
  }

  next(): boolean {
    if (!this.candidates || this.index + 1 >= this.candidates.length) return false;
    this.index++;
    return true;
  }

  key(header: JWTHeaderParameters, jws: FlattenedJWSInput): ResolvedKey["key"] | Promise<ResolvedKey["key"]> {
    if (this.candidates) return this.candidates[this.index]!.key;
    checkBeforeKey(header, jws.signature, this.rules);
    const known = this.rules.store.lookup(header.kid, header.alg);
    if (known) return (this.candidates = known)[0]!.key;
    return this.rules.store.resolve(header.kid, header.alg).then((found) => (this.candidates = found)[0]!.key);
  }
}
