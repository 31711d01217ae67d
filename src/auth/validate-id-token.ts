/**
 * validateIdToken: the client-side ID token checks of spec 2.1 / 5.4 (OpenID Connect Core 3.1.3.7):
 * signature, iss, exp and nbf by jose's jwtVerify (verify-jwt.ts), then aud = client id, iat, nonce, at_hash
 * and s_hash, each failure with its own code.
 */
import { TokenError } from "./token-error.js";
import { KeyStore } from "./key-store.js";
import { verifyJwt } from "./verify-jwt.js";
import { normaliseClaims, checkIssuedAt } from "./normalise-claims.js";
import { checkAlgorithms } from "./resolve-options.js";
import { halfHash } from "./half-hash.js";
import { KEY_STORE } from "./create-access-token-verifier.js";
import type { AccessTokenVerifier, NormalisedClaims } from "./types.js";

export const ID_TOKEN_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"];

export interface ValidateIdTokenOptions {
  issuer: string;
  clientId: string;
  /** A verifier made by createAccessTokenVerifier (its keys are used) or a JWKS object. */
  keys: AccessTokenVerifier | { keys: unknown[] };
  nonce?: string;
  accessToken?: string;
  state?: string;
  /** Seconds since the epoch. */
  now?: number;
  clockToleranceSec?: number;
  algorithms?: string[];
  maxTokenBytes?: number;
}

const storeCache = new WeakMap<object, KeyStore>();

function storeFor(keys: ValidateIdTokenOptions["keys"], issuer: string): KeyStore {
  const fromVerifier = (keys as { [KEY_STORE]?: KeyStore })[KEY_STORE];
  if (fromVerifier) return fromVerifier;
  if (keys && typeof keys === "object" && Array.isArray((keys as { keys?: unknown }).keys)) {
    let s = storeCache.get(keys);
    if (!s) {
      s = new KeyStore({ issuer, jwks: keys as { keys: unknown[] }, refreshCooldownMs: Infinity });
      storeCache.set(keys, s);
    }
    return s;
  }
  throw new TypeError("option keys must be a verifier from createAccessTokenVerifier or a JWKS ({ keys: [...] })");
}

export async function validateIdToken(token: string, options: ValidateIdTokenOptions): Promise<NormalisedClaims> {
  if (!options || typeof options !== "object") throw new TypeError("options must be an object");
  if (typeof options.issuer !== "string" || !options.issuer)
    throw new TypeError("option issuer must be a non-empty string");
  if (typeof options.clientId !== "string" || !options.clientId)
    throw new TypeError("option clientId must be a non-empty string");
  for (const n of ["nonce", "accessToken", "state"] as const) {
    if (options[n] !== undefined && typeof options[n] !== "string") throw new TypeError(`option ${n} must be a string`);
  }
  if (options.now !== undefined && (typeof options.now !== "number" || !Number.isFinite(options.now)))
    throw new TypeError("option now must be seconds since the epoch");
  if (
    options.clockToleranceSec !== undefined &&
    (typeof options.clockToleranceSec !== "number" || !(options.clockToleranceSec >= 0))
  )
    throw new TypeError("option clockToleranceSec must be a non-negative number");
  if (
    options.maxTokenBytes !== undefined &&
    (typeof options.maxTokenBytes !== "number" || !(options.maxTokenBytes >= 64))
  )
    throw new TypeError("option maxTokenBytes must be a number of at least 64");
  const store = storeFor(options.keys, options.issuer);
  const algorithms = checkAlgorithms("algorithms", options.algorithms, ID_TOKEN_ALGORITHMS);
  const tolerance = options.clockToleranceSec ?? 30;
  const now = options.now ?? Date.now() / 1000;
  const { header, payload } = await verifyJwt(token, {
    store,
    issuer: options.issuer,
    issuerRole: "expected",
    noun: "ID token",
    algorithms: [...algorithms],
    maxTokenBytes: options.maxTokenBytes ?? 8192,
    clockToleranceSec: tolerance,
    now: () => now,
  });
  const alg = header.alg;
  const c = normaliseClaims(payload);
  if (!c.aud.includes(options.clientId))
    throw new TokenError("audience_mismatch", "the ID token is not addressed to this client");
  if (c.aud.length > 1 && c.azp !== undefined && c.azp !== options.clientId)
    throw new TokenError("audience_mismatch", "the ID token's azp is another client");
  if (c.iat === undefined) throw new TokenError("claims_invalid", "the ID token has no iat");
  checkIssuedAt(c, now, tolerance, "ID token");
  if (typeof c.sub !== "string" || !c.sub) throw new TokenError("claims_invalid", "the ID token has no sub");
  if (options.nonce !== undefined && c.nonce !== options.nonce)
    throw new TokenError(
      "nonce_mismatch",
      c.nonce === undefined ? "the ID token has no nonce" : "the ID token's nonce is not the one sent",
    );
  if (options.accessToken !== undefined && c.at_hash !== halfHash(options.accessToken, alg)) {
    throw new TokenError(
      "at_hash_mismatch",
      c.at_hash === undefined ? "the ID token has no at_hash" : "at_hash does not match the access token",
    );
  }
  if (options.state !== undefined && c.s_hash !== halfHash(options.state, alg)) {
    throw new TokenError(
      "s_hash_mismatch",
      c.s_hash === undefined ? "the ID token has no s_hash" : "s_hash does not match the state",
    );
  }
  return c;
}
