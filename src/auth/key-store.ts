/**
 * The issuer's public keys: loaded from a JWKS file, a JWKS URL, or the URL named by OpenID discovery.
 * Keeps the last good set when a refresh fails (status() shows the error), refreshes on an unknown kid
 * at most once per cooldown, and tells listeners which keys disappeared so what they signed is forgotten.
 * Keys named inside a token (jku, x5u, jwk, x5c) are never looked at: lookup is by kid only.
 */
import { redactUrl } from "./redact-url.js";
import { readFile } from "node:fs/promises";
import { importJWK, type JWK, type CryptoKey } from "jose";
import { TokenError } from "./token-error.js";
import type { KeyStatus } from "./types.js";

export interface KeyStoreOptions {
  issuer: string;
  jwksUri?: string | undefined;
  jwksFile?: string | undefined;
  /** Keys given directly (used by validateIdToken with a JWKS object). */
  jwks?: { keys: unknown[] } | undefined;
  refreshCooldownMs: number;
  fetchTimeoutMs?: number;
  logger?: { warn(obj: object, msg?: string): void } | undefined;
}

type Listener = (removedKeyIds: string[]) => void;

/** A key's identity for cache invalidation: its kid, or its public material when it has none. */
export function keyId(jwk: JWK): string {
  return typeof jwk.kid === "string" ? jwk.kid : `#${jwk.kty}:${jwk.n ?? jwk.x ?? ""}:${jwk.y ?? ""}`;
}

export class KeyStore {
  private keys: JWK[] = [];
  private imported = new Map<string, Promise<CryptoKey | Uint8Array>>();
  private loaded = false;
  private inflight: Promise<void> | undefined;
  private lastKidRefresh = -Infinity;
  private listeners: Listener[] = [];
  private st: { lastRefreshAt?: string; lastError?: string; refreshes: number; refreshFailures: number } = { refreshes: 0, refreshFailures: 0 };
  readonly source: string;

  constructor(private readonly opts: KeyStoreOptions) {
    this.source = opts.jwks ? "inline JWKS" : opts.jwksFile ? `file:${opts.jwksFile}` : opts.jwksUri ?? `${opts.issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`;
  }

  onRemoved(listener: Listener): void {
    this.listeners.push(listener);
  }

  status(): KeyStatus {
    return { ready: this.loaded, keyCount: this.keys.length, source: this.source, ...this.st };
  }

  get isLoaded(): boolean {
    return this.loaded;
  }

  /** Fetches the set now (coalescing concurrent calls). Never throws; failures land in status(). */
  refresh(): Promise<void> {
    this.inflight ??= this.load().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  private async fetchJson(url: string): Promise<unknown> {
    // Errors name the URL (credentials in it redacted) and the cause, e.g. ECONNREFUSED.
    const shown = redactUrl(url);
    let res: Response;
    try {
      res = await fetch(url, { signal: AbortSignal.timeout(this.opts.fetchTimeoutMs ?? 5000), redirect: "error", headers: { accept: "application/json" } });
    } catch (err) {
      const e = err as Error & { cause?: { code?: string; message?: string } };
      throw new Error(`GET ${shown} failed: ${e.cause?.code ?? e.cause?.message ?? e.message}`);
    }
    if (!res.ok) throw new Error(`GET ${shown} answered HTTP ${res.status}`);
    try {
      return await res.json();
    } catch {
      throw new Error(`GET ${shown}: the answer is not JSON`);
    }
  }

  private async readSet(): Promise<unknown> {
    if (this.opts.jwks) return this.opts.jwks;
    if (this.opts.jwksFile) return JSON.parse(await readFile(this.opts.jwksFile, "utf8"));
    if (this.opts.jwksUri) return this.fetchJson(this.opts.jwksUri);
    const discovery = (await this.fetchJson(this.source)) as { jwks_uri?: unknown } | null;
    if (!discovery || typeof discovery !== "object") throw new Error("the discovery document is not a JSON object");
    const found = (discovery as { issuer?: unknown }).issuer;
    // OpenID Connect Discovery 4.3: the document must name the issuer we asked about.
    if (found !== undefined && found !== this.opts.issuer) throw new Error(`the discovery document names the issuer ${String(found).slice(0, 200)}, not the configured issuer ${this.opts.issuer}`);
    if (typeof discovery.jwks_uri !== "string") throw new Error("the discovery document has no jwks_uri");
    return this.fetchJson(discovery.jwks_uri);
  }

  private async load(): Promise<void> {
    try {
      const set = (await this.readSet()) as { keys?: unknown } | null;
      if (!set || !Array.isArray(set.keys)) throw new Error("the JWKS has no keys array");
      // Only public signing keys; never symmetric ones.
      const keys = (set.keys as JWK[]).filter(
        (k) => k && typeof k === "object" && (k.kty === "RSA" || k.kty === "EC" || k.kty === "OKP") && (k.use === undefined || k.use === "sig") && k.d === undefined,
      );
      const before = new Set(this.keys.map(keyId));
      const after = new Set(keys.map(keyId));
      const removed = [...before].filter((k) => !after.has(k));
      this.keys = keys;
      this.imported.clear();
      this.loaded = true;
      this.st.refreshes++;
      this.st.lastRefreshAt = new Date().toISOString();
      delete this.st.lastError;
      if (removed.length) for (const l of this.listeners) l(removed);
    } catch (err) {
      this.st.refreshFailures++;
      this.st.lastError = (err as Error)?.message ?? String(err);
      this.opts.logger?.warn({ source: this.source, error: this.st.lastError, failures: this.st.refreshFailures, keptKeys: this.keys.length }, "issuer keys could not be refreshed; keeping the last good set");
    }
  }

  private candidates(kid: string | undefined, alg: string): JWK[] {
    return this.keys.filter((k) => (kid === undefined ? true : k.kid === kid) && (k.alg === undefined || k.alg === alg));
  }

  /**
   * Keys that may have signed a token with this kid and alg. An unknown kid triggers one refresh,
   * unless another happened within the cooldown.
   */
  async resolve(kid: string | undefined, alg: string): Promise<Array<{ kid: string | undefined; key: CryptoKey | Uint8Array }>> {
    if (!this.loaded && this.inflight) await this.inflight;
    if (!this.loaded && Date.now() - this.lastKidRefresh >= this.opts.refreshCooldownMs) {
      // Never loaded: retry, but no more than once per cooldown however many requests arrive.
      this.lastKidRefresh = Date.now();
      await this.refresh();
    }
    if (!this.loaded) throw new TokenError("keys_unavailable", "the issuer's keys could not be loaded");
    let found = this.candidates(kid, alg);
    if (found.length === 0 && kid !== undefined && !this.keys.some((k) => k.kid === kid)) {
      const now = Date.now();
      if (now - this.lastKidRefresh >= this.opts.refreshCooldownMs && !this.opts.jwks) {
        this.lastKidRefresh = now;
        await this.refresh();
        found = this.candidates(kid, alg);
      }
    }
    if (found.length === 0) {
      if (kid !== undefined && !this.keys.some((k) => k.kid === kid)) throw new TokenError("kid_unknown", "no key of the issuer has this kid");
      throw new TokenError("signature_invalid", "no key of the issuer fits this token's algorithm");
    }
    const out: Array<{ kid: string | undefined; key: CryptoKey | Uint8Array }> = [];
    for (const jwk of found) {
      const cacheKey = `${this.keys.indexOf(jwk)}|${alg}`;
      let p = this.imported.get(cacheKey);
      if (!p) {
        p = importJWK({ ...jwk, alg }, alg);
        this.imported.set(cacheKey, p);
      }
      try {
        out.push({ kid: keyId(jwk), key: await p });
      } catch {
        // A key that does not fit the algorithm (e.g. EC key, RS256 token) cannot have signed it.
      }
    }
    if (out.length === 0) throw new TokenError("signature_invalid", "no key of the issuer fits this token's algorithm");
    return out;
  }

  /** True while the key with this keyId() is published (used to drop cache entries after rotation). */
  has(id: string | undefined): boolean {
    return id !== undefined && this.keys.some((k) => keyId(k) === id);
  }
}
