/**
 * Loads a synced-users file (a JSON array or NDJSON of { sub, tenant_id, roles }) into a compact index
 * keyed by sub. The file is read in chunks and never held whole; the loader gives the event loop a turn
 * every few milliseconds so decisions keep being answered during a reload. Roles are mapped to catalog ids;
 * records with unknown roles or a bad shape are reported, not kept. Tenant ids and role lists are shared:
 * one frozen entry per distinct (roles, tenant) pair. File size, record count and record length are bounded.
 */
import { open } from "node:fs/promises";
import { setImmediate as nextTurn } from "node:timers/promises";
import { PortierError } from "../errors/portier-error.js";
import { CompactIndexBuilder, isWellFormed, type DirectoryEntries, type DirectoryEntry } from "./compact-index.js";
import { RecordStream, RecordSyntaxError, type RecordLimits } from "./record-stream.js";
import type { RoleResolver } from "./role-names.js";

export type { DirectoryEntries, DirectoryEntry } from "./compact-index.js";

export interface DirectoryIndex {
  entries: DirectoryEntries;
  /** One line per refused record, e.g. `users.json record 12: unknown role "x"` (at most 100 kept). */
  problems: string[];
  rejected: number;
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
const DIRECTORY_LIMITS: Readonly<DirectoryLimits> = { maxFileBytes: 3 * 2 ** 30, maxRecords: 20_000_000, maxRecordChars: 64 * 1024 };

export interface LoadOptions {
  limits?: Partial<DirectoryLimits>;
  /** Bytes read per chunk (default 64 KiB). */
  chunkBytes?: number;
}

const MAX_PROBLEMS = 100;
/** Longest run of loading work between two turns of the event loop. */
const SLICE_MS = 5;
/** Records inserted into the hash table per slice. */
const TABLE_SLICE = 4096;

/** Validates records, interns their role lists and entries, and collects them into the index. */
class DirectoryBuilder {
  private readonly byRoles = new Map<string, { roles: string[]; tenants: Map<string, number> }>();
  private readonly shared: DirectoryEntry[] = [];
  readonly index = new CompactIndexBuilder(this.shared);
  readonly problems: string[] = [];
  rejected = 0;

  constructor(private readonly source: string, private readonly resolve: RoleResolver) {}

  private report(where: string, what: string): void {
    this.rejected++;
    if (this.problems.length < MAX_PROBLEMS) this.problems.push(`${this.source} ${where}: ${what}`);
  }

  readonly add = (record: unknown, where: string): void => {
    if (typeof record !== "object" || record === null || Array.isArray(record)) return this.report(where, "must be an object");
    const r = record as Record<string, unknown>;
    if (typeof r.sub !== "string" || r.sub === "") return this.report(where, "sub must be a non-empty string");
    if (!isWellFormed(r.sub)) return this.report(where, "sub must be well-formed Unicode (it has an unpaired surrogate)");
    if (typeof r.tenant_id !== "string" || r.tenant_id === "") return this.report(where, "tenant_id must be a non-empty string");
    if (!Array.isArray(r.roles)) return this.report(where, "roles must be an array");
    const ids: string[] = [];
    for (const name of r.roles) {
      // The resolver remembers the spellings it has seen: a file names the same few roles millions of times.
      const id = typeof name === "string" ? this.resolve(name) : undefined;
      if (!id) return this.report(where, `unknown role ${JSON.stringify(name)}`);
      if (!ids.includes(id)) ids.push(id);
    }
    this.index.add(r.sub, this.entryNumber(r.tenant_id, ids));
  };

  /** The number of the shared entry for this tenant and role list, made on first sight. */
  private entryNumber(tenant: string, ids: string[]): number {
    const key = ids.length === 1 ? (ids[0] as string) : ids.join(",");
    let group = this.byRoles.get(key);
    if (!group) {
      group = { roles: Object.freeze(ids) as string[], tenants: new Map() };
      this.byRoles.set(key, group);
    }
    let n = group.tenants.get(tenant);
    if (n === undefined) {
      n = this.shared.length;
      this.shared.push(Object.freeze({ tenant_id: tenant, roles: group.roles }));
      group.tenants.set(tenant, n);
    }
    return n;
  }

  result(entries: DirectoryEntries): DirectoryIndex {
    return { entries, problems: this.problems, rejected: this.rejected };
  }
}

function limitsOf(options: LoadOptions): DirectoryLimits {
  return { ...DIRECTORY_LIMITS, ...options.limits };
}

function syntaxError(err: unknown): unknown {
  return err instanceof RecordSyntaxError ? new DirectoryLoadError(err.message) : err;
}

/** Parses a whole text at once (tests, small inputs); files go through loadDirectoryFile. */
export function parseDirectory(text: string, source: string, resolve: RoleResolver, options: LoadOptions = {}): DirectoryIndex {
  const builder = new DirectoryBuilder(source, resolve);
  const records = new RecordStream(source, limitsOf(options), builder.add);
  try {
    records.feed(text);
    records.end();
  } catch (err) {
    throw syntaxError(err);
  }
  return builder.result(builder.index.finish());
}

/** Reads and indexes a directory file chunk by chunk, letting other work run between slices. */
export async function loadDirectoryFile(file: string, resolve: RoleResolver, options: LoadOptions = {}): Promise<DirectoryIndex> {
  const limits = limitsOf(options);
  let handle;
  try {
    handle = await open(file, "r");
  } catch (err) {
    throw new DirectoryLoadError(`${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new DirectoryLoadError(`${file}: not a regular file`);
    const tooBig = () => new DirectoryLoadError(`${file}: larger than ${limits.maxFileBytes} bytes (the limit)`);
    if (stat.size > limits.maxFileBytes) throw tooBig();

    const builder = new DirectoryBuilder(file, resolve);
    const records = new RecordStream(file, limits, builder.add);
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
    while (!builder.index.insertSome(TABLE_SLICE)) await pause();
    return builder.result(builder.index.finish());
  } finally {
    await handle.close();
  }
}
