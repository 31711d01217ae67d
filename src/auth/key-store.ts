/**
 * The issuer's public keys: loaded from a JWKS file, a JWKS URL, or the URL named by OpenID discovery,
 * through the common reload mechanism (src/reload): a file is watched and re-read when it changed, a URL
 * is fetched every refresh interval; a set that cannot be read or parsed is refused and the last good
 * set stays (status() shows the error), and so is a set with no key usable to verify signatures
 * (unusableReason): an empty set would look loaded while every token fails kid_unknown. Refreshes on an
 * unknown kid at most once per cooldown, and tells listeners which keys disappeared so what they signed is
 * forgotten.
 * Keys named inside a token (jku, x5u, jwk, x5c) are never looked at: lookup is by kid only.
 */
import { importJWK, type JWK, type CryptoKey } from "jose";
import { messageOf } from "../errors/caught.js";
import { InputFileError, readInputFile } from "../files/read-input-file.js";
import { Reloader, NOT_MODIFIED, backoffMs, fetchUrl, redactUrls, type LoadContext } from "../reload/index.js";
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
  logger?: { warn(obj: object, msg?: string): void; info?(obj: object, msg?: string): void } | undefined;
}

type Listener = (removedKeyIds: string[]) => void;

/** A key that may have signed a token, ready for jose, with its keyId() for cache invalidation. */
export interface ResolvedKey {
  kid: string;
  key: CryptoKey | Uint8Array;
}

/**
 * While no key set is loaded, a URL source (JWKS or discovery) is retried after 1 s, doubling up to 10 s, so
 * keys arrive within about 10 s of the issuer answering again (the refresh interval and the kid cooldown
 * are minutes and tens of seconds). README "Reloads fail safe", Keys.
 */
export const UNLOADED_RETRY_MS = { first: 1000, max: 10_000 } as const;

/** A JWKS document is small; anything bigger is refused before parsing. */
const MAX_JWKS_BYTES = 1024 * 1024;

interface KeySet {
  keys: JWK[];
  /** The document as read, to tell an unchanged set from a new one. */
  text: string;
}

/** A key's identity for cache invalidation: its kid, or its public material when it has none. */
export function keyId(jwk: JWK): string {
  return typeof jwk.kid === "string" ? jwk.kid : `#${jwk.kty}:${jwk.n ?? jwk.x ?? ""}:${jwk.y ?? ""}`;
}

export class KeyStore {
  private imported = new Map<string, Promise<CryptoKey | Uint8Array>>();
  /** resolve() answers by kid and alg, so the next token with the same header gets its keys without awaiting. */
  private resolved = new Map<string, ResolvedKey[]>();
  private inflight: Promise<boolean> | undefined;
  private lastKidRefresh = -Infinity;
  private listeners: Listener[] = [];
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly reloader: Reloader<KeySet>;
  readonly source: string;

  constructor(private readonly opts: KeyStoreOptions) {
    this.source = opts.jwks
      ? "inline JWKS"
      : opts.jwksFile
        ? `file:${opts.jwksFile}`
        : (opts.jwksUri ?? `${opts.issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`);
    this.reloader = new Reloader<KeySet>({
      name: "keys",
      source: this.source,
      file: opts.jwksFile,
      load: (ctx) => this.load(ctx),
      activate: (next, previous) => {
        this.imported.clear();
        this.resolved.clear();
        const after = new Set(next.keys.map(keyId));
        const removed = (previous?.keys ?? []).map(keyId).filter((k) => !after.has(k));
        if (removed.length) for (const l of this.listeners) l(removed);
      },
      describe: (set) => ({ keyCount: set?.keys.length ?? 0 }),
      logger: opts.logger,
    });
  }

  private get keys(): JWK[] {
    return this.reloader.current?.keys ?? [];
  }

  private get loaded(): boolean {
    return this.reloader.current !== undefined;
  }

  onRemoved(listener: Listener): void {
    this.listeners.push(listener);
  }

  status(): KeyStatus {
    const st = this.reloader.status();
    return {
      ...st,
      ready: this.loaded,
      keyCount: this.keys.length,
      refreshes: st.successfulRequests,
      refreshFailures: st.reloadFailures,
    };
  }

  get isLoaded(): boolean {
    return this.loaded;
  }

  /**
   * Keeps the set fresh: a file is watched (near-instant) and its change checked every intervalMs; a URL is
   * fetched every intervalMs. So a removed key stops verifying within intervalMs at most.
   */
  start(intervalMs: number, watch = true): void {
    if (this.opts.jwks) return;
    if (this.opts.jwksFile) this.reloader.watchFile({ watch, debounceMs: 100, intervalMs });
    else {
      if (intervalMs > 0) this.reloader.poll({ intervalMs });
      this.retryUntilLoaded(1);
    }
  }

  /** Until a set is loaded: attempt n after UNLOADED_RETRY_MS.first doubled n - 1 times, at most its max. */
  private retryUntilLoaded(attempt: number): void {
    if (this.closed || this.loaded) return;
    const delayMs = backoffMs(attempt, { firstMs: UNLOADED_RETRY_MS.first, maxMs: UNLOADED_RETRY_MS.max });
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      // Loaded meanwhile (the first attempt was still running when this was scheduled): nothing to retry.
      if (this.loaded) return;
      void this.refresh().then(() => this.retryUntilLoaded(attempt + 1));
    }, delayMs);
    // Like the reloader's own timers: never what keeps a process alive.
    this.retryTimer.unref();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.reloader.close();
  }

  /** Fetches the set now (coalescing concurrent calls). Never throws; failures land in status(). */
  refresh(): Promise<void> {
    const p = (this.inflight ??= this.reloader.reload().finally(() => {
      this.inflight = undefined;
    }));
    return p.then(() => undefined);
  }

  private async fetchText(url: string, ctx: LoadContext): Promise<string> {
    const res = await fetchUrl(url, {
      timeoutMs: this.opts.fetchTimeoutMs ?? 5000,
      maxBytes: MAX_JWKS_BYTES,
      accept: "application/json",
    });
    ctx.httpCode(res.httpCode);
    if (res.status === 304) throw new Error(`GET ${redactUrls(url)} answered 304 to a request without a validator`);
    return Buffer.from(res.bytes).toString("utf8");
  }

  private async readText(ctx: LoadContext): Promise<string> {
    if (this.opts.jwks) return JSON.stringify(this.opts.jwks);
    if (this.opts.jwksFile) {
      // The source names the file (the log line's `source`, start-up's `config.jwks: FILE`): the reason alone.
      const bytes = await readInputFile(this.opts.jwksFile, MAX_JWKS_BYTES).catch((err: unknown) => {
        throw err instanceof InputFileError ? new Error(err.why) : err;
      });
      return bytes.toString("utf8");
    }
    if (this.opts.jwksUri) return this.fetchText(this.opts.jwksUri, ctx);
    const discovery = parseJson(await this.fetchText(this.source, ctx), "the discovery document");
    if (!discovery || typeof discovery !== "object") throw new Error("the discovery document is not a JSON object");
    const found = "issuer" in discovery ? discovery.issuer : undefined;
    // OpenID Connect Discovery 4.3: the document must name the issuer we asked about.
    if (found !== undefined && found !== this.opts.issuer) {
      // A string as it is; anything else as JSON (String() would print an object as "[object Object]").
      const named = typeof found === "string" ? found : JSON.stringify(found);
      throw new Error(
        `the discovery document names the issuer ${named.slice(0, 200)}, not the configured issuer ${this.opts.issuer}`,
      );
    }
    if (!("jwks_uri" in discovery) || typeof discovery.jwks_uri !== "string")
      throw new Error("the discovery document has no jwks_uri");
    return this.fetchText(discovery.jwks_uri, ctx);
  }

  private async load(ctx: LoadContext): Promise<KeySet | typeof NOT_MODIFIED> {
    const text = await this.readText(ctx);
    if (text === this.reloader.current?.text) return NOT_MODIFIED;
    const set = parseJson(text, "the JWKS");
    if (!set || typeof set !== "object" || !("keys" in set) || !Array.isArray(set.keys))
      throw new Error("the JWKS has no keys array");
    // Only public signing keys; never symmetric ones. A set with none is refused like an empty directory:
    // it would turn every token into kid_unknown while looking loaded (the previous set keeps verifying).
    const given: unknown[] = set.keys;
    const keys = given.filter((k): k is JWK => unusableReason(k) === undefined);
    if (keys.length === 0) {
      const why = given.slice(0, 3).map((k, i) => `key ${i}${kidOf(k)}: ${unusableReason(k)}`);
      const listed = why.length ? `; ${why.join("; ")}${given.length > 3 ? "; ..." : ""}` : "";
      throw new Error(
        `the JWKS has no key usable to verify signatures (${given.length} keys${listed}); ` +
          "it needs at least one public RSA, EC or OKP key for signing",
      );
    }
    return { keys, text };
  }

  private candidates(kid: string | undefined, alg: string): JWK[] {
    return this.keys.filter(
      (k) => (kid === undefined ? true : k.kid === kid) && (k.alg === undefined || k.alg === alg),
    );
  }

  /**
   * Keys that may have signed a token with this kid and alg. An unknown kid triggers one refresh,
   * unless another happened within the cooldown.
   */
  async resolve(kid: string | undefined, alg: string): Promise<ResolvedKey[]> {
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
      if (kid !== undefined && !this.keys.some((k) => k.kid === kid))
        throw new TokenError("kid_unknown", "no key of the issuer has this kid");
      throw new TokenError("signature_invalid", "no key of the issuer fits this token's algorithm");
    }
    const set = this.reloader.current;
    const out: ResolvedKey[] = [];
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
    if (this.reloader.current === set) this.resolved.set(resolvedKey(kid, alg), out);
    return out;
  }

  /** What resolve() answered before for this kid and alg, while the key set is unchanged; synchronous. */
  lookup(kid: string | undefined, alg: string): ResolvedKey[] | undefined {
    return this.resolved.get(resolvedKey(kid, alg));
  }

  /** True while the key with this keyId() is published (used to drop cache entries after rotation). */
  has(id: string | undefined): boolean {
    return id !== undefined && this.keys.some((k) => keyId(k) === id);
  }
}

/** The asymmetric JWS algorithms each key type can verify (RFC 7518 3.1, RFC 8037), and the curves it may have. */
const VERIFYING: Record<string, { algs: string[]; curves?: Record<string, string | undefined> }> = {
  RSA: { algs: ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512"] },
  EC: { algs: ["ES256", "ES384", "ES512"], curves: { "P-256": "ES256", "P-384": "ES384", "P-521": "ES512" } },
  OKP: { algs: ["EdDSA", "Ed25519"], curves: { Ed25519: undefined, Ed448: undefined } },
};

/**
 * Why a JWKS entry cannot verify a token signature, or undefined when it can: it must be a public key of an
 * asymmetric type (RSA, EC, OKP on a signing curve), without private members, whose `use` (if any) is "sig",
 * whose `key_ops` (if any) include "verify", and whose own `alg` (if any) is a signature algorithm of its type
 * (RFC 7517 4.2-4.4). Such keys are dropped from the set; a set of none is refused.
 */
export function unusableReason(k: unknown): string | undefined {
  if (!k || typeof k !== "object" || Array.isArray(k)) return "not a JSON object";
  const jwk = k as JWK;
  const type = typeof jwk.kty === "string" && Object.hasOwn(VERIFYING, jwk.kty) ? VERIFYING[jwk.kty] : undefined;
  if (!type) return `kty ${shown(jwk.kty)} is not RSA, EC or OKP`;
  if (jwk.d !== undefined) return "a private key (has d)";
  if (jwk.use !== undefined && jwk.use !== "sig") return `use ${shown(jwk.use)} is not "sig"`;
  if (jwk.key_ops !== undefined && !(Array.isArray(jwk.key_ops) && jwk.key_ops.includes("verify")))
    return 'key_ops without "verify"';
  if (type.curves && !(typeof jwk.crv === "string" && Object.hasOwn(type.curves, jwk.crv)))
    return `crv ${shown(jwk.crv)} is not a signing curve of ${jwk.kty}`;
  if (jwk.alg !== undefined) {
    if (typeof jwk.alg !== "string" || !type.algs.includes(jwk.alg))
      return `alg ${shown(jwk.alg)} is not a signature algorithm of ${jwk.kty}`;
    const curveAlg = type.curves?.[jwk.crv!];
    if (curveAlg !== undefined && curveAlg !== jwk.alg) return `alg ${jwk.alg} does not fit crv ${jwk.crv}`;
  }
  return undefined;
}

/** A member's value for an error message: JSON, at most 40 characters (the document comes from outside). */
function shown(v: unknown): string {
  const text = JSON.stringify(v) ?? "none";
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

function kidOf(k: unknown): string {
  const kid = k && typeof k === "object" && "kid" in k ? k.kid : undefined;
  return kid === undefined ? "" : ` (kid ${shown(kid)})`;
}

function resolvedKey(kid: string | undefined, alg: string): string {
  return kid === undefined ? `-${alg}` : `${alg}:${kid}`;
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${what} is not valid JSON (${messageOf(err)})`);
  }
}
