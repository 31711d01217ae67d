/**
 * The current policy engine, reloaded through the common reload mechanism (src/reload): the bundle file
 * is watched and re-read, or a bundle server is polled (ETag/If-None-Match, timeout, back-off, size cap).
 * A candidate is loaded completely before it replaces the serving engine; a broken one is refused and
 * the previous engine keeps serving. The status (OPA bundle-status style) feeds /ready and metrics.
 * A loaded bundle is one snapshot: its engine and its catalog's role names (a resolver for claims and one for
 * directory entries), swapped as one value. A decision reads `current` once and takes both from it, so it
 * always resolves roles with the names of the very bundle that evaluates it, whatever reloads meanwhile.
 */
import { EngineLoadError, loadEngine, type DecisionMemoOptions, type VerificationKey } from "../engine/index.js";
import type { DecisionEngine } from "../engine/types.js";
import { Reloader, NOT_MODIFIED, fetchUrl, redactUrls, type ReloadLogger, type ReloadStatus } from "../reload/index.js";
import { entryRoles, roleResolver, type EntryRoles, type RoleResolver } from "../directory/role-resolver.js";
import { RoleNameError } from "../catalog/role-name-index.js";

export interface PolicyStatus extends ReloadStatus {
  revision?: string;
}

export type PolicySource = { file: string; watch: boolean } | { url: string; pollSeconds: number };

/** Safety net behind the file watch (missed events, network file systems). */
const FILE_REREAD_MS = 30_000;
/** Longest wait between two polls of a failing bundle server. */
const MAX_BACKOFF_MS = 300_000;

/** A loaded bundle: its engine and its role names (never swapped apart). */
export interface PolicySnapshot {
  readonly engine: DecisionEngine;
  /** Role names of the bundle's catalog -> role ids (roles claims). */
  readonly resolveRole: RoleResolver;
  /** A directory entry's role ids under this bundle's names (memoised per entry). */
  readonly rolesOf: EntryRoles;
}

export class PolicyHolder {
  private readonly reloader: Reloader<PolicySnapshot>;
  private etag: string | undefined;
  /** Called when a bundle goes live (after the swap), e.g. to report the directory records its names cannot resolve. */
  onActivate: ((snapshot: PolicySnapshot) => void) | undefined;

  /**
   * With `verificationKey`, a bundle (file or server) whose OPA signature does not verify is refused like a broken one.
   * With `memo`, each loaded bundle's engine keeps its own decision memo (a new revision starts empty).
   */
  constructor(
    logger: ReloadLogger,
    private readonly from: PolicySource,
    maxBytes: number,
    verificationKey?: VerificationKey,
    memo?: DecisionMemoOptions,
  ) {
    let candidateEtag: string | undefined;
    const withRoles = async (engine: DecisionEngine, source: string): Promise<PolicySnapshot> => {
      try {
        const resolveRole = roleResolver(engine.roles, "catalog.roles");
        return Object.freeze({ engine, resolveRole, rolesOf: entryRoles(resolveRole) });
      } catch (err) {
        throw err instanceof RoleNameError
          ? new EngineLoadError("data_invalid", `${source}:/data.json: ${err.message}`, { cause: err })
          : err;
      }
    };
    const load = async (ctx: { httpCode(code: number): void }): Promise<PolicySnapshot | typeof NOT_MODIFIED> => {
      if ("file" in from)
        return withRoles(
          await loadEngine(from.file, { source: from.file, maxBytes, verificationKey, memo }),
          from.file,
        );
      const res = await fetchUrl(from.url, {
        etag: this.etag,
        timeoutMs: Math.max(5000, from.pollSeconds * 1000),
        maxBytes,
        accept: "application/gzip",
      });
      ctx.httpCode(res.httpCode);
      if (res.status === 304) return NOT_MODIFIED;
      candidateEtag = res.etag;
      const source = redactUrls(from.url);
      return withRoles(await loadEngine(res.bytes, { source, maxBytes, verificationKey, memo }), source);
    };
    this.reloader = new Reloader<PolicySnapshot>({
      name: "policy",
      source: "file" in from ? from.file : from.url,
      file: "file" in from ? from.file : undefined,
      load,
      // A decision evaluates synchronously on the one snapshot it read: nothing of the old engine is left to close.
      activate: (next) => {
        this.etag = "url" in from ? candidateEtag : undefined;
        this.onActivate?.(next);
      },
      describe: (p) => ({ revision: p?.engine.revision }),
      logger,
    });
  }

  /** The live bundle: read it once per decision and take engine and role names from that one value. */
  get current(): PolicySnapshot | undefined {
    return this.reloader.current;
  }

  get engine(): DecisionEngine | undefined {
    return this.reloader.current?.engine;
  }

  status(): PolicyStatus {
    const revision = this.engine?.revision;
    return { ...this.reloader.status(), ...(revision === undefined ? {} : { revision }) };
  }

  /** The first load, then the watch or the polling. False when the first load failed. */
  async start(): Promise<boolean> {
    const ok = await this.reloader.reload();
    if ("file" in this.from)
      this.reloader.watchFile({
        watch: this.from.watch,
        debounceMs: 200,
        intervalMs: this.from.watch ? FILE_REREAD_MS : 0,
      });
    else this.reloader.poll({ intervalMs: this.from.pollSeconds * 1000, maxBackoffMs: MAX_BACKOFF_MS });
    return ok;
  }

  /** One reload attempt now (tests, admin). */
  reload(): Promise<boolean> {
    return this.reloader.reload();
  }

  async close(): Promise<void> {
    this.reloader.close();
  }
}
