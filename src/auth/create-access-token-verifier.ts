/**
 * createAccessTokenVerifier: the verifier the service calls for every API request. Decodes without
 * trust, verifies the signature with the issuer's own keys, checks iss/time/typ/shape, normalises
 * claims and remembers the result in a bounded cache. Every rejection is a TokenError.
 */
import { TokenError } from "./token-error.js";
import { KeyStore } from "./key-store.js";
import { decodeJws } from "./decode-jws.js";
import { verifySignature } from "./verify-signature.js";
import { normalizeClaims, checkTimes } from "./normalize-claims.js";
import { checkTyp, checkAccessTokenShape } from "./classify-access-token.js";
import { VerifiedTokenCache } from "./verified-token-cache.js";
import { resolveOptions } from "./resolve-options.js";
import type { AccessTokenVerifier, VerifiedAccessToken, VerifierOptions } from "./types.js";

/** Lets validateIdToken reuse a verifier's keys. */
export const KEY_STORE = Symbol("portier.keyStore");

export interface PortierAccessTokenVerifier extends AccessTokenVerifier {
  /** Fetches the key set now, regardless of cooldown (e.g. on a timer or an admin request). */
  refreshKeys(): Promise<void>;
  readonly [KEY_STORE]: KeyStore;
}

export function createAccessTokenVerifier(options: VerifierOptions): PortierAccessTokenVerifier {
  const o = resolveOptions(options);
  const store = new KeyStore({ issuer: o.issuer, jwksUri: o.jwksUri, jwksFile: o.jwksFile, refreshCooldownMs: o.refreshCooldownMs, logger: o.logger });
  const cache = new VerifiedTokenCache(o.cacheSize);
  store.onRemoved((kids) => cache.dropKids(kids));
  const first = store.refresh();
  let closed = false;
  store.start(o.refreshIntervalMs, o.watchJwksFile);

  async function verifyUncached(token: string): Promise<{ result: VerifiedAccessToken; kid: string | undefined }> {
    const { header, payload, alg, kid } = decodeJws(token, o.maxTokenBytes, o.algorithms);
    checkTyp(header, o.requireAtJwtTyp);
    const usedKid = await verifySignature(token, store, kid, alg);
    if (typeof payload.iss !== "string") throw new TokenError("issuer_mismatch", "the token has no iss");
    if (payload.iss !== o.issuer) throw new TokenError("issuer_mismatch", `the token was issued by ${payload.iss.slice(0, 200)}, not by the configured issuer ${o.issuer}`);
    const claims = normalizeClaims(payload);
    checkTimes(claims, o.now(), o.clockToleranceSec);
    checkAccessTokenShape(claims);
    // Frozen: cached answers are shared between callers.
    Object.freeze(claims.aud);
    Object.freeze(claims.scope);
    Object.freeze(claims.amr);
    return { result: { claims: Object.freeze(claims), header: Object.freeze(header), cached: false }, kid: usedKid };
  }

  return {
    [KEY_STORE]: store,
    async verify(token: string): Promise<VerifiedAccessToken> {
      if (closed) throw new TokenError("keys_unavailable", "the verifier is closed");
      if (typeof token !== "string" || token.length === 0) throw new TokenError("token_missing", "no token was presented");
      if (token.length > o.maxTokenBytes) throw new TokenError("token_too_large", `the token is larger than ${o.maxTokenBytes} bytes`);
      const key = o.cacheSize > 0 ? VerifiedTokenCache.keyOf(token) : "";
      if (o.cacheSize > 0) {
        const hit = cache.get(key);
        if (hit) {
          if (hit.exp <= o.now() - o.clockToleranceSec) {
            cache.delete(key);
            throw new TokenError("token_expired", "the token has expired");
          }
          if (store.has(hit.kid)) return { ...hit.value, cached: true };
          cache.delete(key);
        }
      }
      try {
        const { result, kid } = await verifyUncached(token);
        if (o.cacheSize > 0) cache.set(key, result, result.claims.exp, kid);
        return result;
      } catch (err) {
        if (err instanceof TokenError) throw err;
        // Defence in depth: nothing but TokenError leaves verify() for bad input.
        throw new TokenError("token_malformed", "the token could not be processed");
      }
    },
    verifyCached(token: string): VerifiedAccessToken | undefined {
      if (closed || o.cacheSize <= 0 || typeof token !== "string" || token.length === 0 || token.length > o.maxTokenBytes) return undefined;
      const hit = cache.get(VerifiedTokenCache.keyOf(token));
      if (!hit || hit.exp <= o.now() - o.clockToleranceSec || !store.has(hit.kid)) return undefined;
      return { ...hit.value, cached: true };
    },
    async ready(): Promise<void> {
      await first;
      if (!store.isLoaded) throw new TokenError("keys_unavailable", `the issuer's keys could not be loaded: ${store.status().lastError ?? "unknown error"}`);
    },
    status: () => store.status(),
    refreshKeys: () => store.refresh(),
    close(): void {
      closed = true;
      store.close();
      cache.clear();
    },
  };
}
