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

/** Portier's header rules jose does not have: no crit at all (jose accepts b64), a string kid, a base64url signature. */
function checkBeforeKey(header: Record<string, unknown>, signature: string, rules: JwtRules): void {
  if (header.crit !== undefined) throw critUnsupported();
  if (header.kid !== undefined && typeof header.kid !== "string") throw new TokenError("token_malformed", "the header kid is not a string");
  rules.checkHeader?.(header);
  if (signature.length === 0 || !isBase64url(signature)) throw new TokenError("signature_invalid", "the signature is missing or not base64url");
}

export async function verifyJwt(token: string, rules: JwtRules): Promise<VerifiedJwt> {
  screenJws(token, rules.maxTokenBytes);
  let candidates: ResolvedKey[] | undefined;
  let index = 0;
  // jose calls this after its own header checks (JSON, crit, alg allowed); a token without kid may fit several keys.
  const resolveKey = (header: JWTHeaderParameters, jws: FlattenedJWSInput): ResolvedKey["key"] | Promise<ResolvedKey["key"]> => {
    if (candidates) return candidates[index]!.key;
    checkBeforeKey(header, jws.signature, rules);
    const kid = header.kid;
    const known = rules.store.lookup(kid, header.alg);
    if (known) return (candidates = known)[0]!.key;
    return rules.store.resolve(kid, header.alg).then((found) => (candidates = found)[0]!.key);
  };
  const options = { issuer: rules.issuer, algorithms: rules.algorithms, clockTolerance: rules.clockToleranceSec, currentDate: new Date(rules.now() * 1000) };
  for (;;) {
    try {
      const { payload, protectedHeader } = await jwtVerify(token, resolveKey, options);
      return { header: protectedHeader, payload, kid: candidates![index]!.kid };
    } catch (err) {
      const failed = fromJoseError(err, token, rules, candidates !== undefined);
      if (failed.code === "signature_invalid" && candidates && index + 1 < candidates.length) {
        index++;
        continue;
      }
      throw failed;
    }
  }
}
