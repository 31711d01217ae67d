/**
 * The current policy engine, swapped atomically on reload: the bundle file is watched, or a bundle
 * server is polled (HTTP GET with If-None-Match/ETag, interval, exponential backoff). A broken bundle is
 * refused and the previous engine keeps serving; the refusal is kept for /ready and metrics.
 * The role names of the bundle's catalog go live with its policy: the resolver, and whatever was prepared
 * with it (the directory re-resolved), are swapped in the same tick as the engine.
 */
import { watch, type FSWatcher } from "node:fs";
import { basename, dirname } from "node:path";
import { loadEngine } from "../engine/index.js";
import type { DecisionEngine } from "../engine/types.js";
import { NO_ROLE_NAMES, roleResolver, type RoleResolver } from "../directory/role-names.js";
import { RoleNameError } from "../catalog/role-names.js";
import type { Logger } from "pino";

export interface PolicyStatus {
  loaded: boolean;
  revision?: string;
  source: string;
  loadedAt?: string;
  lastError?: string;
  reloads: number;
  reloadFailures: number;
}

export class PolicyHolder {
  engine: DecisionEngine | undefined;
  /** Role names of the active bundle's catalog -> role ids (knows no name until a bundle is loaded). */
  resolveRole: RoleResolver = NO_ROLE_NAMES;
  /**
   * Prepares what depends on role names for a candidate bundle (runs before the swap, may take time);
   * the function it returns is called at the swap, in the same tick as the engine goes live.
   */
  prepareRoles: ((resolve: RoleResolver) => Promise<() => void>) | undefined;
  private readonly state: PolicyStatus;
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private etag: string | undefined;
  private failures = 0;
  private closed = false;
  private loading: Promise<boolean> = Promise.resolve(true);
  onChange: (() => void) | undefined;

  constructor(private readonly logger: Logger, source: string) {
    this.state = { loaded: false, source, reloads: 0, reloadFailures: 0 };
  }

  status(): PolicyStatus {
    return { ...this.state };
  }

  /** Loads a bundle (path or bytes) and swaps it in; false (and the old engine kept) on failure. */
  load(bundle: string | Uint8Array, source: string): Promise<boolean> {
    this.loading = this.loading.then(() => this.doLoad(bundle, source));
    return this.loading;
  }

  private async doLoad(bundle: string | Uint8Array, source: string): Promise<boolean> {
    const first = !this.state.loaded;
    try {
      const next = await loadEngine(bundle, { source });
      let resolveRole: RoleResolver;
      let commit: (() => void) | undefined;
      try {
        resolveRole = roleResolver(next.roles, "catalog.roles");
        commit = await this.prepareRoles?.(resolveRole);
      } catch (err) {
        await next.close();
        throw err instanceof RoleNameError ? new Error(`${source}:/data.json: ${err.message}`) : err;
      }
      const old = this.engine;
      this.engine = next;
      this.resolveRole = resolveRole;
      commit?.();
      Object.assign(this.state, { loaded: true, revision: next.revision, source, loadedAt: new Date().toISOString(), lastError: undefined });
      if (!first) this.state.reloads++;
      this.logger.info({ event: "policy_loaded", source, revision: next.revision }, "policy loaded");
      // Let in-flight decisions on the old engine finish before closing it.
      if (old) setTimeout(() => void old.close().catch(() => undefined), 1000).unref();
      this.onChange?.();
      return true;
    } catch (err) {
      this.state.reloadFailures++;
      this.state.lastError = (err as Error).message;
      this.logger.error({ event: "policy_refused", source, error: (err as Error).message }, first ? "policy could not be loaded" : "new policy refused; the previous one keeps serving");
      this.onChange?.();
      return false;
    }
  }

  watchFile(file: string): void {
    const name = basename(file);
    try {
      this.watcher = watch(dirname(file), (_e, changed) => {
        if (changed && changed.toString() !== name) return;
        clearTimeout(this.timer);
        this.timer = setTimeout(() => void this.load(file, file), 200);
      });
      this.watcher.on("error", () => undefined);
    } catch (err) {
      this.logger.warn({ event: "policy_watch_failed", error: (err as Error).message }, "cannot watch the bundle file");
    }
  }

  /** Polls a bundle server; resolves after the first attempt. */
  async poll(url: string, intervalSeconds: number): Promise<void> {
    const base = intervalSeconds * 1000;
    const attempt = async (): Promise<void> => {
      let ok = false;
      try {
        const headers: Record<string, string> = {};
        if (this.etag) headers["if-none-match"] = this.etag;
        const res = await fetch(url, { headers, signal: AbortSignal.timeout(Math.max(5000, base)) });
        if (res.status === 304) ok = true;
        else if (res.ok) {
          const bytes = new Uint8Array(await res.arrayBuffer());
          ok = await this.load(bytes, url);
          if (ok) this.etag = res.headers.get("etag") ?? undefined;
        } else {
          throw new Error(`HTTP ${res.status}`);
        }
      } catch (err) {
        this.state.lastError = `${url}: ${(err as Error).message}`;
        this.logger.warn({ event: "bundle_poll_failed", url, error: (err as Error).message }, "bundle server unreachable or refused");
      }
      this.failures = ok ? 0 : this.failures + 1;
      if (this.closed) return;
      const delay = ok ? base : Math.min(base * 2 ** Math.min(this.failures, 6), Math.max(base, 300_000));
      this.pollTimer = setTimeout(() => void attempt(), delay);
      this.pollTimer.unref();
    };
    await attempt();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    clearTimeout(this.pollTimer);
    this.watcher?.close();
    await this.engine?.close();
  }
}
