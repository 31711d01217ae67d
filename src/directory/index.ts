/**
 * The synced-users directory: an in-memory index (compact hash table, O(1) lookups) loaded from a file and reloaded
 * through the common reload mechanism (src/reload: watch + periodic re-read, validate, guard, swap), or from a
 * URL polled like a bundle server (fetch-directory.ts: downloaded to a temp file and read by the same loader).
 * A file that is broken, has no valid record, or drops more than the allowed share of the records is
 * refused: the old index keeps serving and the refusal is reported. Role names are resolved at load with
 * the active bundle's names; prepareRoles re-resolves the file for a new bundle so both go live together.
 */
import { loadDirectoryFile, type DirectoryEntry, type DirectoryIndex } from "./load-directory.js";
import type { RoleResolver } from "./role-names.js";
import { DirectoryFeed } from "./fetch-directory.js";
import { Reloader, NOT_MODIFIED, type LoadContext, type ReloadLogger, type ReloadStatus } from "../reload/index.js";

export { parseDirectory, loadDirectoryFile, DirectoryLoadError } from "./load-directory.js";
export type { DirectoryEntries, DirectoryEntry, DirectoryIndex } from "./load-directory.js";
export { loadRoleResolver, roleResolver } from "./role-names.js";
export type { RoleResolver } from "./role-names.js";

export type DirectoryLogger = ReloadLogger;

export interface DirectoryStatus extends ReloadStatus {
  /** The file, for a file source (a URL source shows its redacted URL as `source`). */
  file?: string;
  size: number;
  rejected: number;
}

export interface DirectoryOptions {
  watch?: boolean;
  logger?: DirectoryLogger;
  /** Largest share of the records a reload may drop (0..1, default 0.5); more is refused. */
  maxShrink?: number;
  /** Accept any shrink, an empty directory included. */
  allowShrink?: boolean;
  /** Periodic re-read behind the watch (default 30 s; 0 disables). */
  rereadMs?: number;
}

/** A directory polled from a URL (`--directory-url`) instead of read from a file. */
export interface DirectoryUrl {
  url: string;
  pollSeconds: number;
  /** Cap on the download, on the wire and inflated, and on the file the loader reads. */
  maxBytes: number;
}

const DEFAULT_MAX_SHRINK = 0.5;
/** Longest wait between two polls of a failing directory server (as for a bundle server). */
const MAX_BACKOFF_MS = 300_000;
/** Bounds on one download: the whole of it, and a stall (no byte) within it. */
const DOWNLOAD_TIMEOUT_MS = 600_000;
const DOWNLOAD_IDLE_MS = 30_000;

/** Why a candidate index must not replace the current one, or undefined when it may. */
function directoryRefusal(next: DirectoryIndex, current: DirectoryIndex | undefined, o: { maxShrink: number; allowShrink: boolean }): string | undefined {
  if (o.allowShrink) return undefined;
  if (next.entries.size === 0) {
    const why = next.rejected > 0 ? `all ${next.rejected} records are invalid` : "the file has no record";
    return `refused: ${why}; an empty directory would deny every user (allow it with --allow-directory-shrink)`;
  }
  const before = current?.entries.size ?? 0;
  const dropped = before - next.entries.size;
  if (before > 0 && dropped / before > o.maxShrink) {
    const pct = (n: number) => `${Math.round(n * 100)}%`;
    return `refused: the reload drops ${pct(dropped / before)} of the records (${before} -> ${next.entries.size}), more than the ${pct(o.maxShrink)} allowed by --directory-max-shrink (allow it with --allow-directory-shrink)`;
  }
  return undefined;
}

export class Directory {
  private readonly reloader: Reloader<DirectoryIndex>;
  /** Bumped by every index swap, so a role re-resolution can tell that a newer file load landed meanwhile. */
  private generation = 0;
  /** A URL source's feed (downloads, ETag). */
  private readonly feed: DirectoryFeed | undefined;
  /** Reads a candidate index with these role names (with `ctx`: a poll, which may answer not modified). */
  private readonly read: (resolve: RoleResolver, ctx?: LoadContext) => Promise<DirectoryIndex | typeof NOT_MODIFIED>;

  private constructor(from: string | DirectoryUrl, private resolve: RoleResolver, o: DirectoryOptions) {
    const guard = { maxShrink: o.maxShrink ?? DEFAULT_MAX_SHRINK, allowShrink: o.allowShrink ?? false };
    const logger = o.logger;
    const file = typeof from === "string" ? from : undefined;
    this.file = file;
    if (typeof from === "string") this.read = (resolve) => loadDirectoryFile(from, resolve);
    else {
      const feed = new DirectoryFeed(from.url, { maxBytes: from.maxBytes, timeoutMs: Math.max(DOWNLOAD_TIMEOUT_MS, from.pollSeconds * 1000), idleTimeoutMs: DOWNLOAD_IDLE_MS });
      this.feed = feed;
      const limits = { maxFileBytes: from.maxBytes };
      this.read = (resolve, ctx) => feed.load((f) => loadDirectoryFile(f, resolve, { limits }), ctx, ctx === undefined);
    }
    const load = async (ctx: LoadContext): Promise<DirectoryIndex | typeof NOT_MODIFIED> => {
      for (;;) {
        const resolve = this.resolve;
        const index = await this.read(resolve, ctx);
        // The role names changed during the load: this index used the old ones, load again.
        if (resolve === this.resolve) return index;
      }
    };
    this.reloader = new Reloader<DirectoryIndex>({
      name: "directory",
      source: typeof from === "string" ? from : from.url,
      file,
      load,
      guard: (next, current) => directoryRefusal(next, current, guard),
      activate: (next) => {
        this.generation++;
        this.feed?.activated(next);
        for (const p of next.problems) logger?.warn({ event: "directory_record_rejected", problem: p }, "directory record rejected");
      },
      describe: (index) => ({ size: index?.entries.size ?? 0, rejected: index?.rejected ?? 0 }),
      logger,
    });
  }

  /** The file of a file source. */
  readonly file: string | undefined;

  /** Loads the file once (throws when it is unreadable, unparsable or refused) and optionally watches it. */
  static async open(file: string, resolve: RoleResolver, options: DirectoryOptions = {}): Promise<Directory> {
    const dir = new Directory(file, resolve, options);
    if (!(await dir.reload())) throw new Error(dir.status().lastError ?? `${file}: not loaded`);
    dir.watch(options);
    return dir;
  }

  /** A directory not loaded yet (the role names it needs are not known yet): prepareRoles loads it. */
  static pending(file: string, resolve: RoleResolver, options: DirectoryOptions = {}): Directory {
    const dir = new Directory(file, resolve, options);
    dir.watch(options);
    return dir;
  }

  /**
   * A directory polled from a URL every pollSeconds, with back-off after failures (up to 5 min). With `first`,
   * the first download is awaited; a server that is down, or a feed that is refused, leaves the directory not
   * loaded (not ready) while the polling goes on, as for a bundle server.
   */
  static async poll(from: DirectoryUrl, resolve: RoleResolver, options: DirectoryOptions & { first?: boolean } = {}): Promise<Directory> {
    const dir = new Directory(from, resolve, options);
    if (options.first !== false) await dir.reload();
    dir.reloader.poll({ intervalMs: from.pollSeconds * 1000, maxBackoffMs: MAX_BACKOFF_MS });
    return dir;
  }

  /** The file watch (debounced) and its periodic re-read; with watch false, neither. */
  private watch(options: DirectoryOptions): void {
    const watching = options.watch !== false;
    this.reloader.watchFile({ watch: watching, debounceMs: 150, intervalMs: watching ? (options.rereadMs ?? 30_000) : 0 });
  }

  /**
   * Loads the file with another resolver (a new bundle's role names) without swapping it in; the returned
   * function swaps resolver and index (through the same guard as a reload). When the file cannot be read, or
   * a newer file landed meanwhile, it swaps the resolver and reloads, which reports or fixes it.
   */
  async prepareRoles(resolve: RoleResolver): Promise<() => void> {
    const generation = this.generation;
    const read = await this.read(resolve).catch(() => undefined);
    const index = read === NOT_MODIFIED ? undefined : read;
    return () => {
      this.resolve = resolve;
      // The feed's ETag stands for the index resolved with the old names: the reload downloads it again.
      this.feed?.forget();
      if (!index || generation !== this.generation) return void this.reload();
      this.reloader.offer(index);
    };
  }

  lookup(sub: string): DirectoryEntry | undefined {
    return this.reloader.current?.entries.get(sub);
  }

  get size(): number {
    return this.reloader.current?.entries.size ?? 0;
  }

  status(): DirectoryStatus {
    const index = this.reloader.current;
    return { ...this.reloader.status(), ...(this.file === undefined ? {} : { file: this.file }), size: index?.entries.size ?? 0, rejected: index?.rejected ?? 0 };
  }

  /** Reads the file and swaps the index when it is accepted; on failure the old index stays. */
  reload(): Promise<boolean> {
    return this.reloader.reload();
  }

  close(): void {
    this.reloader.close();
    this.feed?.close();
  }
}
