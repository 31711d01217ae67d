/**
 * The synced-users directory: an in-memory index (compact hash table, O(1) lookups) loaded from a file and reloaded
 * through the common reload mechanism (src/reload: watch + periodic re-read, validate, guard, swap), or from a
 * URL polled like a bundle server (fetch-directory.ts: downloaded to a temp file and read by the same loader).
 * The index keeps role names as written; each decision resolves them with its bundle's names (role-resolver.ts
 * entryRoles), so loading needs no bundle. The guards count what a decision will see: the records whose names
 * the live bundle resolves (all records while no bundle is loaded). A file that is broken, incomplete (NDJSON
 * without its end record), has no such record, or drops more than the allowed share of the largest such count
 * accepted within the shrink window is refused: the old index keeps serving and the refusal is reported.
 * checkRoles takes a new bundle's names: it counts again, and lowers the window's counts by the records they revoke.
 * Provisioning (SCIM) changes users one by one through applyChanges, into a layer over the index (overlay.ts)
 * that lookups consult first: it wins for its users and outlives reloads of the file or URL.
 */
import { loadDirectoryFile, parseDirectory, type DirectoryEntry, type DirectoryIndex } from "./load-directory.js";
import type { EntryRoles } from "./role-resolver.js";
import { DirectoryFeed } from "./fetch-directory.js";
import { DirectoryOverlay, type OverlayChange } from "./overlay.js";
import { searchSubjects, type SubjectAsk } from "./search-subjects.js";
import { Reloader, type ReloaderOptions, type ReloadLogger, type ReloadStatus } from "../reload/index.js";

export { parseDirectory, loadDirectoryFile, DirectoryLoadError } from "./load-directory.js";
export type { DirectoryEntries, DirectoryEntry, DirectoryIndex } from "./load-directory.js";
export { entryRoles, loadRoleResolver, roleResolver } from "./role-resolver.js";
export type { EntryRoles, RoleResolver } from "./role-resolver.js";
export { endRecordLine, TailDigest } from "./end-record.js";
export type { OverlayChange } from "./overlay.js";

export type DirectoryLogger = ReloadLogger;

/** The role names of one loaded bundle, as the directory counts by them. */
export interface BundleNames {
  /** A directory entry's role ids under the bundle's names (undefined: a name the bundle does not know). */
  resolve: EntryRoles;
  /** The bundle's revision, named in reports. */
  bundle: string;
}

export interface DirectoryStatus extends ReloadStatus {
  /** The file, for a file source (a URL source shows its redacted URL as `source`). */
  file?: string;
  size: number;
  rejected: number;
  /** Records of the index whose role names the active bundle cannot resolve (those users are not synced). */
  rolesUnresolved: number;
  /** The bundle revision rolesUnresolved was counted by (absent until a bundle is loaded). */
  rolesBundle?: string;
  /** Set when more than half of the records are unresolved (shown in /ready's problems). */
  rolesProblem?: string;
  /** Users changed by provisioning (SCIM) over the loaded index, when there are any. */
  provisioned?: ProvisionedStatus;
}

/** The provisioned layer: users it holds, of them synced (with an entry), and those naming an unknown role. */
export interface ProvisionedStatus {
  users: number;
  synced: number;
  rolesUnresolved: number;
}

export interface DirectoryOptions {
  watch?: boolean;
  logger?: DirectoryLogger;
  /** Largest share of the records a reload may drop (0..1, default 0.5); more is refused. */
  maxShrink?: number;
  /** Accept any shrink, an empty directory included (each accepted index then resets the high-water mark). */
  allowShrink?: boolean;
  /**
   * How long the largest accepted record count stays the shrink guard's reference (default 24 h; 0: the current
   * index only).
   */
  shrinkWindowMs?: number;
  /** Periodic re-read behind the watch (default 30 s; 0 disables). */
  rereadMs?: number;
  /** The clock of the shrink window (tests). */
  now?: () => number;
  /** The names of the bundle live when the directory opens, which the first load is counted by. */
  roles?: BundleNames | undefined;
}

/** A directory polled from a URL (`--directory-url`) instead of read from a file. */
export interface DirectoryUrl {
  url: string;
  pollSeconds: number;
  /** Cap on the download, on the wire and inflated, and on the file the loader reads. */
  maxBytes: number;
}

/** Longest wait between two polls of a failing directory server (as for a bundle server). */
const MAX_BACKOFF_MS = 300_000;
/** Bounds on one download: the whole of it, and a stall (no byte) within it. */
const DOWNLOAD_TIMEOUT_MS = 600_000;
const DOWNLOAD_IDLE_MS = 30_000;
const DEFAULT_MAX_SHRINK = 0.5;
const DEFAULT_SHRINK_WINDOW_MS = 86_400_000;
/** Share of unresolvable records above which /ready lists a problem. */
const UNRESOLVED_PROBLEM_SHARE = 0.5;
const EXAMPLES = 5;
/** The source named in the status of a directory fed by provisioning only. */
const PROVISIONED_SOURCE = "provisioning (SCIM)";

const pct = (n: number) => `${Math.round(n * 100)}%`;

/**
 * The largest record counts accepted within a sliding window (a monotonic queue: times rising, counts
 * falling), so that a series of small shrinks cannot pass the shrink guard one step at a time.
 */
class HighWaterMark {
  private readonly marks: { at: number; size: number }[] = [];

  constructor(private readonly windowMs: number) {}

  accepted(size: number, at: number): void {
    for (let last = this.marks.at(-1); last !== undefined && last.size <= size; last = this.marks.at(-1))
      this.marks.pop();
    this.marks.push({ at, size });
  }

  reset(): void {
    this.marks.length = 0;
  }

  /** Every count within the window lowered by `by` records (never below 0; the order of the queue is kept). */
  lower(by: number): void {
    for (const mark of this.marks) mark.size = Math.max(0, mark.size - by);
  }

  /** The largest count accepted within the window before `now` (0 when none). */
  largest(now: number): number {
    for (let first = this.marks[0]; first !== undefined && first.at < now - this.windowMs; first = this.marks[0])
      this.marks.shift();
    return this.marks[0]?.size ?? 0;
  }
}

/** An index as the guards see it: its records, and those of them the live bundle's names resolve. */
interface Counted {
  records: number;
  usable: number;
  rejected: number;
}

/**
 * Why a candidate index must not replace the current one, or undefined when it may. Counts are of usable
 * records (resolved by `by`, the live bundle; every record while there is none): what decisions will see.
 */
function directoryRefusal(
  next: Counted,
  now: number,
  largest: number,
  by: string | undefined,
  o: { maxShrink: number; allowShrink: boolean; windowMs: number },
): string | undefined {
  if (o.allowShrink) return undefined;
  if (next.records === 0) {
    const why = next.rejected > 0 ? `all ${next.rejected} records are invalid` : "the file has no record";
    return `refused: ${why}; an empty directory would deny every user (allow it with --allow-directory-shrink)`;
  }
  const unknown = next.records - next.usable;
  if (next.usable === 0) {
    return (
      `refused: all ${next.records} records name a role that bundle ${by} does not know; no user would be synced ` +
      "(allow it with --allow-directory-shrink)"
    );
  }
  const before = Math.max(now, largest);
  const dropped = before - next.usable;
  if (before > 0 && dropped / before > o.maxShrink) {
    const from =
      before === now
        ? `${before}`
        : `${before}, the largest accepted in the last ${Math.round(o.windowMs / 1000)} s (now ${now}),`;
    const counted =
      unknown > 0
        ? `; ${unknown} of the file's ${next.records} records name a role that bundle ${by} does not know`
        : "";
    return (
      `refused: the reload drops ${pct(dropped / before)} of the records (${from} -> ${next.usable}${counted}), ` +
      `more than the ${pct(o.maxShrink)} allowed by --directory-max-shrink (allow it with --allow-directory-shrink)`
    );
  }
  return undefined;
}

/** How many of an index's records one bundle's names cannot resolve, with a few of the name lists. */
export function unresolvedRecords(index: DirectoryIndex, rolesOf: EntryRoles): { records: number; examples: string[] } {
  let records = 0;
  const examples = new Map<string, number>();
  for (const { entry, records: n } of index.groups) {
    if (rolesOf(entry)) continue;
    records += n;
    const names = JSON.stringify(entry.names);
    if (examples.has(names) || examples.size < EXAMPLES) examples.set(names, (examples.get(names) ?? 0) + n);
  }
  return { records, examples: [...examples].map(([names, n]) => `${names}: ${n}`) };
}

export class Directory {
  private readonly reloader: Reloader<DirectoryIndex>;
  /** The live bundle's names (checkRoles): the guards count by them, and each newly loaded index is reported. */
  private rolesOf: BundleNames | undefined;
  /** Records of the current index that rolesOf cannot resolve. */
  private unresolved = 0;
  /** The shrink window's counts (of usable records). */
  private readonly mark: HighWaterMark;
  /** The file of a file source. */
  readonly file: string | undefined;
  /** A URL source's feed (downloads, ETag). */
  private readonly feed: DirectoryFeed | undefined;

  /** Per-user changes from provisioning (SCIM), consulted before the loaded index: they win for their users. */
  private readonly overlay = new DirectoryOverlay();
  /** Records the overlay adds to the index's count (new synced subs) minus those it masks. */
  private overlayDelta = 0;

  private constructor(
    from: string | DirectoryUrl | null,
    private readonly o: DirectoryOptions,
  ) {
    const guard = {
      maxShrink: o.maxShrink ?? DEFAULT_MAX_SHRINK,
      allowShrink: o.allowShrink ?? false,
      windowMs: o.shrinkWindowMs ?? DEFAULT_SHRINK_WINDOW_MS,
    };
    const now = o.now ?? Date.now;
    const mark = new HighWaterMark(guard.windowMs);
    this.mark = mark;
    this.rolesOf = o.roles;
    if (o.roles) this.overlay.recount(o.roles.resolve);
    const logger = o.logger;
    const file = typeof from === "string" ? from : undefined;
    this.file = file;
    let load: ReloaderOptions<DirectoryIndex>["load"];
    if (from === null) load = () => Promise.resolve(parseDirectory("[]", PROVISIONED_SOURCE));
    else if (typeof from === "string") load = () => loadDirectoryFile(from);
    else {
      const feed = new DirectoryFeed(from.url, {
        maxBytes: from.maxBytes,
        timeoutMs: Math.max(DOWNLOAD_TIMEOUT_MS, from.pollSeconds * 1000),
        idleTimeoutMs: DOWNLOAD_IDLE_MS,
      });
      this.feed = feed;
      const limits = { maxFileBytes: from.maxBytes };
      load = (ctx) => feed.load((f) => loadDirectoryFile(f, { limits }), ctx);
    }
    this.reloader = new Reloader<DirectoryIndex>({
      name: "directory",
      source: from === null ? PROVISIONED_SOURCE : typeof from === "string" ? from : from.url,
      file,
      load,
      guard: (next, current) =>
        from === null
          ? undefined
          : directoryRefusal(
              this.counted(next),
              current ? this.counted(current).usable : 0,
              mark.largest(now()),
              this.rolesOf?.bundle,
              guard,
            ),
      activate: (next) => {
        // --allow-directory-shrink accepts a purge: the purged size is the new reference.
        if (guard.allowShrink) mark.reset();
        this.feed?.activated(next);
        for (const p of next.problems)
          logger?.warn({ event: "directory_record_rejected", problem: p }, "directory record rejected");
        this.unresolved = this.rolesOf ? this.report(next, this.rolesOf) : 0;
        mark.accepted(next.entries.size - this.unresolved, now());
        this.overlayDelta = this.countOverlay(next);
      },
      describe: (index) => ({ size: index?.entries.size ?? 0, rejected: index?.rejected ?? 0 }),
      logger,
    });
  }

  /** Loads the file once (throws when it is unreadable, unparsable or refused) and optionally watches it. */
  static async open(file: string, options: DirectoryOptions = {}): Promise<Directory> {
    const dir = new Directory(file, options);
    if (!(await dir.reload())) throw new Error(dir.status().lastError ?? `${file}: not loaded`);
    const watching = options.watch !== false;
    dir.reloader.watchFile({
      watch: watching,
      debounceMs: 150,
      intervalMs: watching ? (options.rereadMs ?? 30_000) : 0,
    });
    return dir;
  }

  /**
   * A directory with no file or URL: every user comes from provisioning (SCIM), through applyChanges.
   */
  static async provisioned(options: DirectoryOptions = {}): Promise<Directory> {
    const dir = new Directory(null, options);
    await dir.reload();
    return dir;
  }

  /**
   * Applies one step of provisioning changes (a SCIM request's effect) at once: a decision sees all of it or none.
   * These users' states win over the loaded index's; reloads of the file or URL keep them.
   */
  applyChanges(changes: readonly OverlayChange[]): void {
    const base = this.reloader.current?.entries;
    for (const { sub, entry } of changes) {
      const before = this.overlay.get(sub);
      const was = before === undefined ? base?.get(sub) !== undefined : before !== null;
      const is = entry !== null;
      this.overlayDelta += (is ? 1 : 0) - (was ? 1 : 0);
    }
    this.overlay.apply(changes);
  }

  /** How the overlay changes the count of `index`: its synced subs not in the index, minus the index's it masks. */
  private countOverlay(index: DirectoryIndex): number {
    let delta = 0;
    for (const [sub, entry] of this.overlay.subs()) {
      const inBase = index.entries.get(sub) !== undefined;
      if (entry && !inBase) delta++;
      else if (!entry && inBase) delta--;
    }
    return delta;
  }

  /**
   * A directory polled from a URL every pollSeconds, with back-off after failures (up to 5 min). The first
   * download is awaited; a server that is down, or a feed that is refused, leaves the directory not loaded
   * (not ready) while the polling goes on, as for a bundle server.
   */
  static async poll(from: DirectoryUrl, options: DirectoryOptions = {}): Promise<Directory> {
    const dir = new Directory(from, options);
    await dir.reload();
    dir.reloader.poll({ intervalMs: from.pollSeconds * 1000, maxBackoffMs: MAX_BACKOFF_MS });
    return dir;
  }

  /**
   * A bundle went live with these names: counts the records they cannot resolve (those users are not synced
   * under it), logs `directory_roles_unresolved` when there are any, and keeps the count for the status; the
   * guards count by these names, and every index loaded later is counted and reported, until the next bundle.
   * The same names again (the same snapshot) change nothing.
   */
  checkRoles(resolve: EntryRoles, bundle: string): void {
    if (this.rolesOf?.resolve === resolve) return;
    this.rolesOf = { resolve, bundle };
    this.overlay.recount(resolve);
    const index = this.reloader.current;
    if (!index) return;
    const before = this.unresolved;
    this.unresolved = this.report(index, this.rolesOf);
    // The bundle is authoritative: the records it revokes leave the shrink guard's reference too, or every
    // directory reload within the window would be refused as a shrink that the policy change made.
    if (this.unresolved > before) this.mark.lower(this.unresolved - before);
  }

  /** An index's records, and those the live bundle's names resolve (every record while no bundle is loaded). */
  private counted(index: DirectoryIndex): { records: number; usable: number; rejected: number } {
    const records = index.entries.size;
    const unknown = this.rolesOf ? unresolvedRecords(index, this.rolesOf.resolve).records : 0;
    return { records, usable: Math.max(0, records - unknown), rejected: index.rejected };
  }

  /** Counts the records `by` cannot resolve and logs `directory_roles_unresolved` when there are any. */
  private report(index: DirectoryIndex, by: BundleNames): number {
    const { records, examples } = unresolvedRecords(index, by.resolve);
    if (records === 0) return 0;
    const size = index.entries.size;
    this.o.logger?.warn(
      {
        event: "directory_roles_unresolved",
        source: this.reloader.status().source,
        revision: by.bundle,
        records: size,
        unresolved: records,
        share: pct(records / size),
        examples,
      },
      `${records} of ${size} directory records name a role the bundle does not know; those users are not synced`,
    );
    return records;
  }

  lookup(sub: string): DirectoryEntry | undefined {
    const changed = this.overlay.get(sub);
    if (changed !== undefined) return changed ?? undefined;
    return this.reloader.current?.entries.get(sub);
  }

  /**
   * Walks the users of an AuthZEN subject search, the file's then the overlay's, by the index of users per entry
   * (search-subjects.ts): where to continue, or -1 at the end.
   */
  searchSubjects(from: number, budget: number, ask: SubjectAsk): number {
    return searchSubjects(this.reloader.current?.entries, this.overlay, from, budget, ask);
  }

  get size(): number {
    return (this.reloader.current?.entries.size ?? 0) + this.overlayDelta;
  }

  status(): DirectoryStatus {
    const index = this.reloader.current;
    const size = this.size;
    const unresolved = this.unresolved + this.overlay.unresolved;
    const status: DirectoryStatus = {
      ...this.reloader.status(),
      ...(this.file === undefined ? {} : { file: this.file }),
      size,
      rejected: index?.rejected ?? 0,
      rolesUnresolved: unresolved,
      ...(this.rolesOf ? { rolesBundle: this.rolesOf.bundle } : {}),
    };
    if (this.overlay.held > 0)
      status.provisioned = {
        users: this.overlay.held,
        synced: this.overlay.entries,
        rolesUnresolved: this.overlay.unresolved,
      };
    if (size > 0 && unresolved / size > UNRESOLVED_PROBLEM_SHARE && this.rolesOf) {
      status.rolesProblem =
        `${unresolved} of ${size} records (${pct(unresolved / size)}) name a role that bundle ` +
        `${this.rolesOf.bundle} does not know; those users are not synced`;
    }
    return status;
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
