/**
 * The current policy engine, reloaded through the common reload mechanism (src/reload): the bundle file
 * is watched and re-read, or a bundle server is polled (ETag/If-None-Match, timeout, back-off, size cap).
 * A candidate is loaded completely before it replaces the serving engine; a broken one is refused and
 * the previous engine keeps serving. The status (OPA bundle-status style) feeds /ready and metrics.
 * The role names of the bundle's catalog go live with its policy: the resolver, and whatever was prepared
 * with it (the directory re-resolved), are swapped in the same tick as the engine.
 */
import { EngineLoadError, loadEngine, type DecisionMemoOptions, type VerificationKey } from "../engine/index.js";
import type { DecisionEngine } from "../engine/types.js";
import { Reloader, NOT_MODIFIED, fetchUrl, redactUrls, type ReloadLogger, type ReloadStatus } from "../reload/index.js";
import { NO_ROLE_NAMES, roleResolver, type RoleResolver } from "../directory/role-names.js";
import { RoleNameError } from "../catalog/role-names.js";

export interface PolicyStatus extends ReloadStatus {
  revision?: string;
}

export type PolicySource = { file: string; watch: boolean } | { url: string; pollSeconds: number };

/** Safety net behind the file watch (missed events, network file systems). */
const FILE_REREAD_MS = 30_000;
/** Longest wait between two polls of a failing bundle server. */
const MAX_BACKOFF_MS = 300_000;

/** A loaded bundle: its engine, its role names, and what was prepared with them (swapped in together). */
interface LoadedPolicy {
  engine: DecisionEngine;
  resolveRole: RoleResolver;
  commit: (() => void) | undefined;
}

export class PolicyHolder {
  private readonly reloader: Reloader<LoadedPolicy>;
  private etag: string | undefined;
  /**
   * Prepares what depends on role names for a candidate bundle (runs before the swap, may take time);
   * the function it returns is called at the swap, in the same tick as the engine goes live.
   */
  prepareRoles: ((resolve: RoleResolver) => Promise<() => void>) | undefined;
  onChange: (() => void) | undefined;

  /**
   * With `verificationKey`, a bundle (file or server) whose OPA signature does not verify is refused like a broken one.
   * With `memo`, each loaded bundle's engine keeps its own decision memo (a new revision starts empty).
   */
  constructor(logger: ReloadLogger, private readonly from: PolicySource, maxBytes: number, verificationKey?: VerificationKey, memo?: DecisionMemoOptions) {
    let candidateEtag: string | undefined;
    const withRoles = async (engine: DecisionEngine, source: string): Promise<LoadedPolicy> => {
      try {
        const resolveRole = roleResolver(engine.roles, "catalog.roles");
        return { engine, resolveRole, commit: await this.prepareRoles?.(resolveRole) };
      } catch (err) {
        engine.close();
        throw err instanceof RoleNameError ? new EngineLoadError("data_invalid", `${source}:/data.json: ${err.message}`, { cause: err }) : err;
      }
    };
    const load = async (ctx: { httpCode(code: number): void }): Promise<LoadedPolicy | typeof NOT_MODIFIED> => {
      if ("file" in from) return withRoles(await loadEngine(from.file, { source: from.file, maxBytes, verificationKey, memo }), from.file);
      const res = await fetchUrl(from.url, { etag: this.etag, timeoutMs: Math.max(5000, from.pollSeconds * 1000), maxBytes, accept: "application/gzip" });
      ctx.httpCode(res.httpCode);
      if (res.status === 304) return NOT_MODIFIED;
      candidateEtag = res.etag;
      const source = redactUrls(from.url);
      return withRoles(await loadEngine(res.bytes, { source, maxBytes, verificationKey, memo }), source);
    };
    this.reloader = new Reloader<LoadedPolicy>({
      name: "policy",
      source: "file" in from ? from.file : from.url,
      file: "file" in from ? from.file : undefined,
      load,
      activate: (next, old) => {
        this.etag = "url" in from ? candidateEtag : undefined;
        next.commit?.();
        // Let in-flight decisions on the old engine finish before closing it.
        if (old) setTimeout(() => old.engine.close(), 1000).unref();
      },
      describe: (p) => ({ revision: p?.engine.revision }),
      logger,
    });
    this.reloader.onChange = () => this.onChange?.();
  }

  get engine(): DecisionEngine | undefined {
    return this.reloader.current?.engine;
  }

  /** Role names of the active bundle's catalog -> role ids (knows no name until a bundle is loaded). */
  get resolveRole(): RoleResolver {
    return this.reloader.current?.resolveRole ?? NO_ROLE_NAMES;
  }

  status(): PolicyStatus {
    const revision = this.engine?.revision;
    return { ...this.reloader.status(), ...(revision === undefined ? {} : { revision }) };
  }

  /** The first load, then the watch or the polling. False when the first load failed. */
  async start(): Promise<boolean> {
    const ok = await this.reloader.reload();
    if ("file" in this.from) this.reloader.watchFile({ watch: this.from.watch, debounceMs: 200, intervalMs: this.from.watch ? FILE_REREAD_MS : 0 });
    else this.reloader.poll({ intervalMs: this.from.pollSeconds * 1000, maxBackoffMs: MAX_BACKOFF_MS });
    return ok;
  }

  /** One reload attempt now (tests, admin). */
  reload(): Promise<boolean> {
    return this.reloader.reload();
  }

  async close(): Promise<void> {
    this.reloader.close();
    this.engine?.close();
  }
}
