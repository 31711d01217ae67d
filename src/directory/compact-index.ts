/**
 * A compact sub -> entry index for millions of directory records. Instead of a Map holding one key string
 * and one entry object per record, it keeps every sub's UTF-8 bytes in byte pages, each record's start,
 * length, hash and value in pages of typed arrays, and an open-addressing hash table in one typed array;
 * a record's value is the number of a shared {tenant_id, roles} entry. About 60 B per record for UUID
 * subs, and a few thousand typed arrays whatever the size, so the garbage collector has nothing per record
 * to trace (a 1M-entry Map made every major GC walk a million keys and objects). Pages, not arrays grown
 * by doubling: growing never copies, so no single step of a load takes long. The builder also counts the
 * records each shared entry serves (a later record for a sub replaces the earlier one's count).
 */

/** One shared record value: the tenant and the role names as the file writes them (resolved per bundle). */
export interface DirectoryEntry {
  readonly tenant_id: string;
  readonly names: readonly string[];
}

/** What lookups need: `get(sub)` and `size` (a Map satisfies it too); `scan` walks the records (AuthZEN search). */
export interface DirectoryEntries {
  get(sub: string): DirectoryEntry | undefined;
  readonly size: number;
  scan?(from: number, budget: number, visit: (sub: string, entry: DirectoryEntry) => boolean): number;
  /** Record numbers run from 0 to `records` - 1 (a replaced record keeps its number, and is not live). */
  readonly records?: number;
  /** The live records of each shared entry, in file order (the subject search's index). */
  recordsByEntry?(): ReadonlyMap<DirectoryEntry, Uint32Array>;
  /** The sub of record number `rec`. */
  subAt?(rec: number): string;
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const utf8 = new TextEncoder();
/** In a `u` regex a surrogate class matches only unpaired halves, which UTF-8 cannot carry. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** False for strings with an unpaired surrogate (they would all encode to U+FFFD and collide). */
export function isWellFormed(s: string): boolean {
  return !LONE_SURROGATE.test(s);
}

/**
 * Writes `s` as UTF-8 into `out` at `at` (the caller leaves 3 bytes per UTF-16 unit of room) and returns the
 * number of bytes and their FNV-1a hash. ASCII, the usual case, never leaves JS.
 */
function encode(s: string, out: Uint8Array, at: number): { length: number; hash: number } {
  let hash = FNV_OFFSET;
  let i = 0;
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) break;
    out[at + i] = c;
    hash = Math.imul(hash ^ c, FNV_PRIME);
  }
  if (i === s.length) return { length: i, hash: mix(hash) };
  const { written } = utf8.encodeInto(s.slice(i), out.subarray(at + i));
  for (let j = at + i; j < at + i + written; j++) hash = Math.imul(hash ^ (out[j] as number), FNV_PRIME);
  return { length: i + written, hash: mix(hash) };
}

/** Murmur3's finaliser: FNV's multiply only carries bits upwards, and the table uses the low bits. */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Byte pages grow from 64 KiB to 1 MiB; an address is page << 20 | offset (32 bits: 4096 pages). */
const ADDRESS_BITS = 20;
const MAX_ARENA_PAGE = 1 << ADDRESS_BITS;
const MAX_ARENA_PAGES = 2 ** (32 - ADDRESS_BITS);
/** Per-record arrays come in pages of 4096 records. */
const RECORD_BITS = 12;
const RECORD_PAGE = 1 << RECORD_BITS;
const RECORD_MASK = RECORD_PAGE - 1;
/** The hash table is at most 70% full. */
const MAX_LOAD = 0.7;

interface Records {
  arena: Uint8Array[];
  starts: Uint32Array[];
  lengths: Uint32Array[];
  hashes: Uint32Array[];
  values: Uint32Array[];
}

function sameBytes(r: Records, rec: number, key: Uint8Array, length: number): boolean {
  const p = rec >>> RECORD_BITS;
  const i = rec & RECORD_MASK;
  if ((r.lengths[p] as Uint32Array)[i] !== length) return false;
  const address = (r.starts[p] as Uint32Array)[i] as number;
  const page = r.arena[address >>> ADDRESS_BITS] as Uint8Array;
  const at = address & (MAX_ARENA_PAGE - 1);
  for (let k = 0; k < length; k++) if (page[at + k] !== key[k]) return false;
  return true;
}

const hashOf = (r: Records, rec: number) => (r.hashes[rec >>> RECORD_BITS] as Uint32Array)[rec & RECORD_MASK] as number;

/** Collects records in arrival order; the hash table is built afterwards (a later record for a sub wins). */
export class CompactIndexBuilder {
  private readonly r: Records = { arena: [], starts: [], lengths: [], hashes: [], values: [] };
  private page = new Uint8Array(0);
  private used = 0;
  private count = 0;
  private table: Uint32Array | undefined;
  private mask = 0;
  private distinct = 0;
  private inserted = 0;
  /** Records in the table per shared entry number. */
  private counts = new Uint32Array(0);

  constructor(private readonly shared: readonly DirectoryEntry[]) {}

  get records(): number {
    return this.count;
  }

  /** `value` is the number of the record's entry in the shared list. Subs must be well-formed Unicode. */
  add(sub: string, value: number): void {
    if (this.table) throw new Error("the index is already built");
    const room = sub.length * 3;
    if (this.used + room > this.page.length) {
      if (this.r.arena.length >= MAX_ARENA_PAGES)
        throw new RangeError("directory index full: subs take more than 4 GiB");
      const size = Math.max(room, Math.min(MAX_ARENA_PAGE, 65536 << this.r.arena.length));
      this.page = new Uint8Array(size);
      this.r.arena.push(this.page);
      this.used = 0;
    }
    const i = this.count & RECORD_MASK;
    if (i === 0) {
      this.r.starts.push(new Uint32Array(RECORD_PAGE));
      this.r.lengths.push(new Uint32Array(RECORD_PAGE));
      this.r.hashes.push(new Uint32Array(RECORD_PAGE));
      this.r.values.push(new Uint32Array(RECORD_PAGE));
    }
    const p = this.count >>> RECORD_BITS;
    const { length, hash } = encode(sub, this.page, this.used);
    (this.r.starts[p] as Uint32Array)[i] = (((this.r.arena.length - 1) << ADDRESS_BITS) | this.used) >>> 0;
    (this.r.lengths[p] as Uint32Array)[i] = length;
    (this.r.hashes[p] as Uint32Array)[i] = hash;
    (this.r.values[p] as Uint32Array)[i] = value;
    this.used += length;
    this.count++;
  }

  /**
   * Inserts up to `budget` more records into the hash table; true when all are in. Lets a caller build a
   * large table in slices between which other work runs.
   */
  insertSome(budget: number): boolean {
    if (!this.table) {
      let capacity = 16;
      while (this.count > capacity * MAX_LOAD) capacity *= 2;
      this.table = new Uint32Array(capacity);
      this.mask = capacity - 1;
      this.counts = new Uint32Array(this.shared.length);
    }
    const end = Math.min(this.count, this.inserted + budget);
    for (let rec = this.inserted; rec < end; rec++) this.insert(rec);
    this.inserted = end;
    return end === this.count;
  }

  finish(): CompactEntries {
    while (!this.insertSome(1 << 30));
    return new CompactEntries(this.r, this.table as Uint32Array, this.distinct, this.shared, this.count);
  }

  /** After finish: how many records of the index use each shared entry (by entry number). */
  recordsPerEntry(): Uint32Array {
    return this.counts;
  }

  private valueOf(rec: number): number {
    return (this.r.values[rec >>> RECORD_BITS] as Uint32Array)[rec & RECORD_MASK] as number;
  }

  private insert(rec: number): void {
    const table = this.table as Uint32Array;
    const r = this.r;
    const hash = hashOf(r, rec);
    const p = rec >>> RECORD_BITS;
    const i = rec & RECORD_MASK;
    const length = (r.lengths[p] as Uint32Array)[i] as number;
    const address = (r.starts[p] as Uint32Array)[i] as number;
    const at = address & (MAX_ARENA_PAGE - 1);
    const key = (r.arena[address >>> ADDRESS_BITS] as Uint8Array).subarray(at, at + length);
    for (let slot = hash & this.mask; ; slot = (slot + 1) & this.mask) {
      const held = table[slot] as number;
      if (held === 0) {
        table[slot] = rec + 1;
        this.distinct++;
        (this.counts[this.valueOf(rec)] as number)++;
        return;
      }
      if (hashOf(r, held - 1) === hash && sameBytes(r, held - 1, key, length)) {
        table[slot] = rec + 1; // a later record for the same sub replaces the earlier one
        (this.counts[this.valueOf(held - 1)] as number)--;
        (this.counts[this.valueOf(rec)] as number)++;
        return;
      }
    }
  }
}

/** The built, read-only index. */
export class CompactEntries implements DirectoryEntries {
  private scratch = new Uint8Array(256);
  private readonly decoder = new TextDecoder();
  private byEntry: Map<DirectoryEntry, Uint32Array> | undefined;

  constructor(
    private readonly r: Records,
    private readonly table: Uint32Array,
    readonly size: number,
    private readonly shared: readonly DirectoryEntry[],
    readonly records = size,
  ) {}

  /**
   * Visits the live records from record number `from` on, in file order, looking at `budget` records at most (a
   * record replaced by a later one for the same sub is skipped), until `visit` answers false: the record number to
   * continue from, or -1 at the end.
   */
  scan(from: number, budget: number, visit: (sub: string, entry: DirectoryEntry) => boolean): number {
    const end = Math.min(this.records, from + budget);
    for (let rec = Math.max(0, from); rec < end; rec++) {
      if (!this.isLive(rec)) continue;
      if (!visit(this.subAt(rec), this.entryAt(rec))) return rec + 1 >= this.records ? -1 : rec + 1;
    }
    return end >= this.records ? -1 : end;
  }

  /** The bytes of record `rec`'s sub (a view into the arena). */
  private keyAt(rec: number): Uint8Array {
    const p = rec >>> RECORD_BITS;
    const i = rec & RECORD_MASK;
    const address = (this.r.starts[p] as Uint32Array)[i] as number;
    const at = address & (MAX_ARENA_PAGE - 1);
    return (this.r.arena[address >>> ADDRESS_BITS] as Uint8Array).subarray(at, at + (this.r.lengths[p]![i] ?? 0));
  }

  private entryAt(rec: number): DirectoryEntry {
    return this.shared[(this.r.values[rec >>> RECORD_BITS] as Uint32Array)[rec & RECORD_MASK] as number]!;
  }

  /** The table holds the last record of each sub: record `rec` is live when its sub's slot holds it. */
  private isLive(rec: number): boolean {
    const key = this.keyAt(rec);
    const hash = hashOf(this.r, rec);
    const mask = this.table.length - 1;
    let slot = hash & mask;
    while (
      this.table[slot] !== 0 &&
      !(hashOf(this.r, this.table[slot]! - 1) === hash && sameBytes(this.r, this.table[slot]! - 1, key, key.length))
    )
      slot = (slot + 1) & mask;
    return this.table[slot] === rec + 1;
  }

  subAt(rec: number): string {
    return this.decoder.decode(this.keyAt(rec));
  }

  /**
   * The live records of each shared entry (a tenant and its role names), in file order: built on first use, one
   * pass over the table and two over the records (80 ms for a million records on a busy 2-CPU machine), kept with
   * this snapshot (a reload builds a new snapshot, and a new index with it). 4 bytes per record.
   */
  recordsByEntry(): ReadonlyMap<DirectoryEntry, Uint32Array> {
    if (this.byEntry) return this.byEntry;
    // The table holds each sub's live record (its number + 1): the live records, without a look-up each.
    const live = new Uint8Array(this.records);
    for (const held of this.table) if (held !== 0) live[held - 1] = 1;
    const counts = new Uint32Array(this.shared.length);
    for (let rec = 0; rec < this.records; rec++)
      if (live[rec] === 1) counts[(this.r.values[rec >>> RECORD_BITS] as Uint32Array)[rec & RECORD_MASK] as number]!++;
    const lists = Array.from(counts, (n) => new Uint32Array(n));
    const filled = new Uint32Array(this.shared.length);
    for (let rec = 0; rec < this.records; rec++) {
      if (live[rec] === 0) continue;
      const v = (this.r.values[rec >>> RECORD_BITS] as Uint32Array)[rec & RECORD_MASK] as number;
      lists[v]![filled[v]!++] = rec;
    }
    const byEntry = new Map<DirectoryEntry, Uint32Array>();
    for (const [v, list] of lists.entries()) if (list.length > 0) byEntry.set(this.shared[v]!, list);
    this.byEntry = byEntry;
    return byEntry;
  }

  get(sub: string): DirectoryEntry | undefined {
    if (typeof sub !== "string") return undefined;
    if (sub.length * 3 > this.scratch.length) this.scratch = new Uint8Array(sub.length * 3);
    const { length, hash } = encode(sub, this.scratch, 0);
    if (length !== sub.length && !isWellFormed(sub)) return undefined;
    const mask = this.table.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const held = this.table[slot] as number;
      if (held === 0) return undefined;
      const rec = held - 1;
      if (hashOf(this.r, rec) === hash && sameBytes(this.r, rec, this.scratch, length)) {
        return this.shared[(this.r.values[rec >>> RECORD_BITS] as Uint32Array)[rec & RECORD_MASK] as number];
      }
    }
  }
}
