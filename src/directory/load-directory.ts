/**
 * Loads a synced-users file (a JSON array or NDJSON of { sub, tenant_id, roles }) into a compact index
 * keyed by sub. The file is read in chunks and never held whole; the loader gives the event loop a turn
 * every few milliseconds so decisions keep being answered during a reload. Role names are kept as written:
 * each decision resolves them with the names of the bundle that evaluates it (role-resolver.ts entryRoles), so
 * loading needs no bundle. Records with a bad shape are reported, not kept. Tenant ids and role name lists
 * are shared: one frozen entry per distinct (names, tenant) pair, with the count of records using it.
 * An NDJSON file must end with its end record (end-record.ts), checked before the index is returned, so a
 * prefix of a feed is never an index. File size, record count and record length are bounded.
 */
import type { Stats } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { setImmediate as nextTurn } from "node:timers/promises";
import { unreadable } from "../errors/caught.js";
import { PortierError } from "../errors/portier-error.js";
import { openInputFile } from "../files/read-input-file.js";
import { CompactIndexBuilder, isWellFormed, type DirectoryEntries, type DirectoryEntry } from "./compact-index.js";
import { RecordStream, RecordSyntaxError, type RecordLimits } from "./record-stream.js";
import { TailDigest } from "./end-record.js";

export type { DirectoryEntries, DirectoryEntry } from "./compact-index.js";

export interface DirectoryIndex {
  entries: DirectoryEntries;
  /** One line per refused record, e.g. `users.json record 12: roles must be an array` (at most 100 kept). */
  problems: string[];
  rejected: number;
  /** Each shared entry with the number of the index's records that use it (to count what a bundle cannot resolve). */
  groups: readonly DirectoryGroup[];
}

export interface DirectoryGroup {
  entry: DirectoryEntry;
  records: number;
}

export class DirectoryLoadError extends PortierError {
  static override readonly code = "directory_invalid";
}

export interface DirectoryLimits extends RecordLimits {
  /** Largest file accepted, in bytes. */
  maxFileBytes: number;
}

/**
 * Default bounds: 3 GiB (10M records of ~110 B in NDJSON are 1.1 GB; the index's offsets are 32-bit),
 * 20M records, 64 Ki characters per record or line (a record with every role by label is ~2 KB).
 */
export const DIRECTORY_LIMITS: Readonly<DirectoryLimits> = {
  maxFileBytes: 3 * 2 ** 30,
  maxRecords: 20_000_000,
  maxRecordChars: 64 * 1024,
};

export interface LoadOptions {
  limits?: Partial<DirectoryLimits>;
  /** Bytes read per chunk (default 64 KiB). */
  chunkBytes?: number;
  /** Called with each record kept (its sub and shared entry), for a reader that lists people (portier review). */
  onRecord?: (sub: string, entry: DirectoryEntry) => void;
}

const MAX_PROBLEMS = 100;

/** A role name as a record lists it: a string with something other than blanks. */
const isRoleName = (name: unknown): name is string => typeof name === "string" && name.trim() !== "";
/** Longest run of loading work between two turns of the event loop. */
const SLICE_MS = 5;
/** Records inserted into the hash table per slice. */
const TABLE_SLICE = 4096;

/** Validates records, interns their role lists and entries, and collects them into the index. */
class DirectoryBuilder {
  private readonly byNames = new Map<string, { names: readonly string[]; tenants: Map<string, number> }>();
  private readonly shared: DirectoryEntry[] = [];
  readonly index = new CompactIndexBuilder(this.shared);
  readonly problems: string[] = [];
  rejected = 0;

  constructor(
    private readonly source: string,
    private readonly onRecord?: (sub: string, entry: DirectoryEntry) => void,
  ) {}

  private report(where: string, what: string): void {
    this.rejected++;
    if (this.problems.length < MAX_PROBLEMS) this.problems.push(`${this.source} ${where}: ${what}`);
  }

  readonly add = (record: unknown, where: string): void => {
    if (typeof record !== "object" || record === null || Array.isArray(record))
      return this.report(where, "must be an object");
    // `in` narrows the parsed object to one that has the field, whose value is then checked by `typeof`.
    if (!("sub" in record) || typeof record.sub !== "string" || record.sub === "")
      return this.report(where, "sub must be a non-empty string");
    if (!isWellFormed(record.sub))
      return this.report(where, "sub must be well-formed Unicode (it has an unpaired surrogate)");
    if (!("tenant_id" in record) || typeof record.tenant_id !== "string" || record.tenant_id === "")
      return this.report(where, "tenant_id must be a non-empty string");
    if (!("roles" in record) || !Array.isArray(record.roles)) return this.report(where, "roles must be an array");
    const roles: unknown[] = record.roles;
    if (!roles.every(isRoleName))
      return this.report(
        where,
        `roles[${roles.findIndex((name) => !isRoleName(name))}] must be a role name (a non-blank string)`,
      );
    const n = this.entryNumber(record.tenant_id, roles);
    this.index.add(record.sub, n);
    const entry = this.shared[n];
    if (this.onRecord && entry) this.onRecord(record.sub, entry);
  };

  /** The number of the shared entry for this tenant and role name list, made on first sight. */
  private entryNumber(tenant: string, names: string[]): number {
    // A single name not starting with "[" is its own key; any other list its JSON (which starts with "["): no two
    // lists share a key.
    const one = names.length === 1 ? names[0] : undefined;
    const key = one !== undefined && !one.startsWith("[") ? one : JSON.stringify(names);
    let group = this.byNames.get(key);
    if (!group) {
      group = { names: Object.freeze([...names]), tenants: new Map() };
      this.byNames.set(key, group);
    }
    let n = group.tenants.get(tenant);
    if (n === undefined) {
      n = this.shared.length;
      this.shared.push(Object.freeze({ tenant_id: tenant, names: group.names }));
      group.tenants.set(tenant, n);
    }
    return n;
  }

  result(entries: DirectoryEntries): DirectoryIndex {
    const counts = this.index.recordsPerEntry();
    const groups: DirectoryGroup[] = [];
    for (const [n, entry] of this.shared.entries()) {
      const records = counts[n];
      if (records) groups.push({ entry, records });
    }
    return { entries, problems: this.problems, rejected: this.rejected, groups };
  }
}

function limitsOf(options: LoadOptions): DirectoryLimits {
  return { ...DIRECTORY_LIMITS, ...options.limits };
}

function syntaxError(err: unknown): unknown {
  return err instanceof RecordSyntaxError ? new DirectoryLoadError(err.message) : err;
}

const SEAL_HINT = "a feed writes it last (`portier directory seal FILE` appends it)";

/**
 * After the last chunk: an NDJSON text must end with an end record whose count and digest match what came
 * before it. Throws DirectoryLoadError naming the source and what is wrong.
 */
function checkComplete(source: string, records: RecordStream, digest: TailDigest): void {
  if (!records.isNdjson) return;
  const end = records.endRecordFound;
  if (!end)
    throw new DirectoryLoadError(
      `${source}: the NDJSON directory has no end record (a feed still being written?); ${SEAL_HINT}`,
    );
  if (end.records !== records.recordCount) {
    throw new DirectoryLoadError(
      `${source}:${end.line}: the end record counts ${end.records} records but ${records.recordCount} come ` +
        `before it (a feed cut short or edited after sealing); ${SEAL_HINT}`,
    );
  }
  if (digest.beforeLastLine() !== end.sha256) {
    throw new DirectoryLoadError(
      `${source}:${end.line}: the end record's sha256 does not match the bytes before it (a feed cut short ` +
        `or edited after sealing); ${SEAL_HINT}`,
    );
  }
}

/** Parses a whole text at once (tests, small inputs); files go through loadDirectoryFile. */
export function parseDirectory(text: string, source: string, options: LoadOptions = {}): DirectoryIndex {
  const builder = new DirectoryBuilder(source, options.onRecord);
  const records = new RecordStream(source, limitsOf(options), builder.add);
  const digest = new TailDigest();
  try {
    digest.update(Buffer.from(text, "utf8"));
    records.feed(text);
    records.end();
  } catch (err) {
    throw syntaxError(err);
  }
  checkComplete(source, records, digest);
  return builder.result(builder.index.finish());
}

/**
 * Opens a directory file to read (a regular file: a FIFO or a device is refused without waiting on it), or throws
 * a DirectoryLoadError naming it and why (loading and sealing).
 */
export async function openDirectoryFile(file: string): Promise<{ handle: FileHandle; stats: Stats }> {
  try {
    return await openInputFile(file);
  } catch (err) {
    throw new DirectoryLoadError(unreadable(file, err));
  }
}

/** Reads and indexes a directory file chunk by chunk, letting other work run between slices. */
export async function loadDirectoryFile(file: string, options: LoadOptions = {}): Promise<DirectoryIndex> {
  const limits = limitsOf(options);
  const { handle, stats: stat } = await openDirectoryFile(file);
  try {
    const tooBig = () => new DirectoryLoadError(`${file}: larger than ${limits.maxFileBytes} bytes (the limit)`);
    if (stat.size > limits.maxFileBytes) throw tooBig();

    const builder = new DirectoryBuilder(file, options.onRecord);
    const records = new RecordStream(file, limits, builder.add);
    const digest = new TailDigest();
    const decoder = new TextDecoder("utf-8", { fatal: true });
    const chunk = Buffer.allocUnsafe(options.chunkBytes ?? 64 * 1024);
    let read = 0;
    let turn = performance.now();
    const pause = async () => {
      if (performance.now() - turn < SLICE_MS) return;
      await nextTurn();
      turn = performance.now();
    };
    try {
      for (;;) {
        const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
        if (bytesRead === 0) break;
        read += bytesRead;
        if (read > limits.maxFileBytes) throw tooBig();
        digest.update(chunk.subarray(0, bytesRead));
        let text: string;
        try {
          text = decoder.decode(chunk.subarray(0, bytesRead), { stream: true });
        } catch {
          throw new DirectoryLoadError(`${file}: not valid UTF-8 (within bytes ${read - bytesRead}-${read})`);
        }
        records.feed(text);
        await pause();
      }
      let rest: string;
      try {
        rest = decoder.decode();
      } catch {
        throw new DirectoryLoadError(`${file}: not valid UTF-8 (the file ends inside a character)`);
      }
      records.feed(rest);
      records.end();
    } catch (err) {
      throw syntaxError(err);
    }
    checkComplete(file, records, digest);
    while (!builder.index.insertSome(TABLE_SLICE)) await pause();
    return builder.result(builder.index.finish());
  } finally {
    await handle.close();
  }
}
