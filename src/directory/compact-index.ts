/**
 * A compact sub -> entry index for millions of directory records. Instead of a Map holding one key string
 * and one entry object per record, it keeps every sub's UTF-8 bytes in one byte arena, an open-addressing
 * hash table and per-record offsets/hashes/values in typed arrays, and each record's value as the number of
 * a shared {tenant_id, roles} entry. About 60 B per record for UUID subs, and only a handful of heap
 * objects whatever the size, so the garbage collector has nothing per record to trace (a 1M-entry Map
 * made every major GC walk a million keys and objects, which slowed decisions while it served).
 */

export interface DirectoryEntry {
  tenant_id: string;
  roles: string[];
}

/** What lookups need: `get(sub)` and `size` (a Map satisfies it too). */
export interface DirectoryEntries {
  get(sub: string): DirectoryEntry | undefined;
  readonly size: number;
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

function grown<T extends Uint8Array | Uint32Array>(a: T, need: number): T {
  if (need <= a.length) return a;
  let size = a.length * 2;
  while (size < need) size *= 2;
  const b = new (a.constructor as new (n: number) => T)(size);
  b.set(a);
  return b;
}

/** Collects records in arrival order; `finish` builds the hash table (a later record for a sub wins). */
export class CompactIndexBuilder {
  private bytes = new Uint8Array(1 << 16);
  private used = 0;
  /** offsets[i] .. offsets[i + 1] are record i's bytes. */
  private offsets = new Uint32Array(1 << 12);
  private hashes = new Uint32Array(1 << 12);
  private values = new Uint32Array(1 << 12);
  private count = 0;
  private table: Uint32Array | undefined;
  private mask = 0;
  private distinct = 0;
  private inserted = 0;

  constructor(private readonly shared: readonly DirectoryEntry[]) {}

  get records(): number {
    return this.count;
  }

  /** `value` is the number of the record's entry in the shared list. Subs must be well-formed Unicode. */
  add(sub: string, value: number): void {
    this.bytes = grown(this.bytes, this.used + sub.length * 3);
    if (this.count + 2 > this.offsets.length) {
      this.offsets = grown(this.offsets, this.count + 2);
      this.hashes = grown(this.hashes, this.count + 2);
      this.values = grown(this.values, this.count + 2);
    }
    const { length, hash } = encode(sub, this.bytes, this.used);
    this.offsets[this.count] = this.used;
    this.hashes[this.count] = hash;
    this.values[this.count] = value;
    this.used += length;
    this.count++;
    this.offsets[this.count] = this.used;
  }

  /**
   * Inserts up to `budget` more records into the hash table; true when all are in. Lets a caller build a
   * large table in slices between which other work runs.
   */
  insertSome(budget: number): boolean {
    if (!this.table) {
      // Trim the arrays to their content first: growth by doubling leaves up to half of them unused.
      this.bytes = this.bytes.slice(0, this.used);
      this.offsets = this.offsets.slice(0, this.count + 1);
      this.hashes = this.hashes.slice(0, this.count);
      this.values = this.values.slice(0, this.count);
      let capacity = 16;
      while (capacity < this.count * 2) capacity *= 2;
      this.table = new Uint32Array(capacity);
      this.mask = capacity - 1;
    }
    const end = Math.min(this.count, this.inserted + budget);
    for (let rec = this.inserted; rec < end; rec++) this.insert(rec);
    this.inserted = end;
    return end === this.count;
  }

  finish(): CompactEntries {
    while (!this.insertSome(1 << 30));
    return new CompactEntries(this.bytes, this.offsets, this.hashes, this.values, this.table as Uint32Array, this.distinct, this.shared);
  }

  private insert(rec: number): void {
    const table = this.table as Uint32Array;
    const hash = this.hashes[rec] as number;
    const start = this.offsets[rec] as number;
    const length = (this.offsets[rec + 1] as number) - start;
    for (let slot = hash & this.mask; ; slot = (slot + 1) & this.mask) {
      const held = table[slot] as number;
      if (held === 0) {
        table[slot] = rec + 1;
        this.distinct++;
        return;
      }
      const other = held - 1;
      if (this.hashes[other] === hash && sameBytes(this.bytes, this.offsets[other] as number, (this.offsets[other + 1] as number) - (this.offsets[other] as number), this.bytes, start, length)) {
        table[slot] = rec + 1; // a later record for the same sub replaces the earlier one
        return;
      }
    }
  }
}

function sameBytes(a: Uint8Array, aStart: number, aLength: number, b: Uint8Array, bStart: number, bLength: number): boolean {
  if (aLength !== bLength) return false;
  for (let i = 0; i < aLength; i++) if (a[aStart + i] !== b[bStart + i]) return false;
  return true;
}

/** The built, read-only index. */
export class CompactEntries implements DirectoryEntries {
  private scratch = new Uint8Array(256);

  constructor(
    private readonly bytes: Uint8Array,
    private readonly offsets: Uint32Array,
    private readonly hashes: Uint32Array,
    private readonly values: Uint32Array,
    private readonly table: Uint32Array,
    readonly size: number,
    private readonly shared: readonly DirectoryEntry[],
  ) {}

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
      const start = this.offsets[rec] as number;
      if (this.hashes[rec] === hash && sameBytes(this.bytes, start, (this.offsets[rec + 1] as number) - start, this.scratch, 0, length)) {
        return this.shared[this.values[rec] as number];
      }
    }
  }

  /** Bytes held by the typed arrays (the shared entries are few and not counted). */
  get byteLength(): number {
    return this.bytes.byteLength + this.offsets.byteLength + this.hashes.byteLength + this.values.byteLength + this.table.byteLength;
  }
}
