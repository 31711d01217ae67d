/**
 * createAccessTokenVerifier: the verifier the service calls for every API request. jose's jwtVerify checks
 * the token with the issuer's own keys (verify-jwt.ts); then typ/shape rules of access tokens (the shape the
 * project declares, asked at each verification), claims
 * normalised, and the result remembered in a bounded cache whose entries go with their key. Every
 * rejection is a TokenError.
 */
import { TokenError } from "./token-error.js";
import { KeyStore } from "./key-store.js";
import { verifyJwt, type JwtRules } from "./verify-jwt.js";
import { normaliseClaims, checkIssuedAt } from "./normalise-claims.js";
import { checkTyp, checkAccessTokenShape } from "./classify-access-token.js";
import { VerifiedTokenCache, type CacheEntry } from "./verified-token-cache.js";
import { resolveOptions } from "./resolve-options.js";
import type { AccessTokenVerifier, VerifiedAccessToken, VerifierOptions } from "./types.js";

/** Lets validateIdToken reuse a verifier's keys. */
export const KEY_STORE = Symbol("portier.keyStore");

export interface PortierAccessTokenVerifier extends AccessTokenVerifier {
  readonly [KEY_STORE]: KeyStore;
}

export function createAccessTokenVerifier(options: VerifierOptions): PortierAccessTokenVerifier {
  const o = resolveOptions(options);
  const store = new KeyStore({
    issuer: o.issuer,
    jwksUri: o.jwksUri,
    jwksFile: o.jwksFile,
    refreshCooldownMs: o.refreshCooldownMs,
    logger: o.logger,
  });
  const cache = new VerifiedTokenCache(o.cacheSize);
  store.onRemoved((kids) => cache.dropKids(kids));
  const first = store.refresh();
  let closed = false;
  store.start(o.refreshIntervalMs, o.watchJwksFile);
  const rules: JwtRules = {
    store,
    issuer: o.issuer,
    issuerRole: "configured",
    noun: "token",
    algorithms: [...o.algorithms],
    maxTokenBytes: o.maxTokenBytes,
    clockToleranceSec: o.clockToleranceSec,
    now: o.now,
    checkHeader: (header) => checkTyp(header, o.requireAtJwtTyp),
  };

  async function verifyUncached(token: string): Promise<CacheEntry> {
    const { header, payload, kid } = await verifyJwt(token, rules);
    const claims = normaliseClaims(payload);
    checkIssuedAt(claims, o.now(), o.clockToleranceSec, "token");
    checkAccessTokenShape(claims, o.tokenShape());
    // Frozen: cached answers are shared between callers.
    Object.freeze(claims.aud);
    Object.freeze(claims.scope);
    Object.freeze(claims.amr);
    return {
      value: { claims: Object.freeze(claims), header: Object.freeze(header), cached: false },
      exp: claims.exp,
      kid,
    };
  }

  const expired = (entry: CacheEntry) => entry.exp <= o.now() - o.clockToleranceSec;
  const cacheable = (token: string) =>
    o.cacheSize > 0 && !closed && typeof token === "string" && token.length > 0 && token.length <= o.maxTokenBytes;

  return {
    [KEY_STORE]: store,
    async verify(token: string): Promise<VerifiedAccessToken> {
      if (closed) throw new TokenError("keys_unavailable", "the verifier is closed");
      const key = cacheable(token) ? VerifiedTokenCache.keyOf(token) : undefined;
      if (key !== undefined) {
        const hit = cache.get(key);
        if (hit) {
          if (expired(hit)) {
            cache.delete(key);
            throw new TokenError("token_expired", "the token has expired");
          }
          if (store.has(hit.kid)) {
            // The project's token shape may have changed since (a reloaded bundle): a cached token is held to it too.
            checkAccessTokenShape(hit.value.claims, o.tokenShape());
            return { ...hit.value, cached: true };
          }
          cache.delete(key);
        }
      }
      const entry = await verifyUncached(token);
      if (key !== undefined) cache.set(key, entry);
      return entry.value;
    },
    async ready(): Promise<void> {
      await first;
      if (!store.isLoaded)
        throw new TokenError(
          "keys_unavailable",
          `the issuer's keys could not be loaded: ${store.status().lastError ?? "unknown error"}`,
        );
    },
    status: () => store.status(),
    close(): void {
      closed = true;
      store.close();
      cache.clear();
    },
  };
}
