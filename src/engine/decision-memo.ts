/**
 * A bounded memo of decisions for one engine (one bundle revision: a new bundle makes a new engine and so
 * a new, empty memo). The key is the exact policy input as the JSON text the engine writes into wasm
 * memory, so a lookup costs one hash of a string the engine builds anyway. Least recently used entries go
 * first once either bound (entries, bytes) is reached (lru-cache's max and maxSize). Stored decisions are
 * frozen: a caller can read them, never change what the next caller gets.
 * Admission (TinyLFU's "doorkeeper"): a decision is stored the second time its key is missed, not the
 * first. The doorkeeper is a table of 32-bit fingerprints of once-missed keys, one slot per entry (rounded up to
 * a power of two), a newer key taking an older one's slot: it holds no strings, so on traffic that never
 * repeats (fresh ids in paths) a miss allocates nothing that outlives the request. Storing every miss only to
 * evict it later cost 5-15% of a decision in the benchmark (objects kept past the young generation), a
 * doorkeeper keeping the key strings about half of that. Two keys with one fingerprint only admit a key one
 * miss early: the memo's answers are looked up by the exact key, never by the fingerprint. The price is one
 * more evaluation per distinct input before it can hit.
 */
import { LRUCache } from "lru-cache";
import type { Decision } from "./types.js";

export interface DecisionMemoOptions {
  /** Most decisions kept; 0 turns the memo off. */
  entries: number;
  /** Most bytes kept, counted as 2 per UTF-16 unit of key and answer text plus ENTRY_OVERHEAD_BYTES. */
  bytes?: number;
  /**
   * Where hits and misses are counted: the service passes one tally to every engine it loads, so that the
   * process's hit rate (portier_decision_memo_{hits,misses}_total) outlives a reload. Default: the memo's own.
   */
  counts?: MemoCounts | undefined;
}

/** Lookups answered from the memo (hits) and not (misses). */
export interface MemoCounts {
  hits: number;
  misses: number;
}

export const DEFAULT_MEMO_BYTES = 32 * 1024 * 1024;
/** What an entry costs beyond its strings (map slot, entry object, the decision's objects), estimated. */
export const ENTRY_OVERHEAD_BYTES = 256;

/** Every unit of a key's head is hashed; past it, one unit in TAIL_STRIDE (and the length). */
const HEAD_UNITS = 128;
const TAIL_STRIDE = 8;

/**
 * The doorkeeper's fingerprint of a key, never 0 (0 marks an empty slot): FNV-1a over the key's head (the
 * method and the path, where ids that never repeat differ), then a sample of the rest. A full hash in JS costs
 * ~3 ns per unit, a third of a decision's memo budget for a 350-unit input; two keys that differ only outside
 * the sample share a fingerprint, which admits the second one a miss early, nothing more.
 */
function fingerprintOf(key: string): number {
  const n = key.length;
  const head = n < HEAD_UNITS ? n : HEAD_UNITS;
  let h = Math.imul(0x811c9dc5 ^ n, 0x01000193);
  for (let i = 0; i < head; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  for (let i = head; i < n; i += TAIL_STRIDE) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h | 1;
}

/** Freezes a decision and the objects it holds (its shape is known: route, route.parameters, would_deny). */
function freezeDecision(d: Decision): Decision {
  if (d.route !== null && typeof d.route === "object") {
    if (d.route.parameters !== null && typeof d.route.parameters === "object") Object.freeze(d.route.parameters);
    Object.freeze(d.route);
  }
  if (d.would_deny !== null && typeof d.would_deny === "object") Object.freeze(d.would_deny);
  return Object.freeze(d);
}

export class DecisionMemo {
  private readonly lru: LRUCache<string, Decision>;
  private readonly counts: MemoCounts;
  /** The doorkeeper: the fingerprints of keys missed once, one slot each (the slot is the fingerprint's low bits). */
  private readonly seen: Int32Array;
  private readonly seenMask: number;

  constructor(options: DecisionMemoOptions) {
    if (!Number.isInteger(options.entries) || options.entries < 1)
      throw new TypeError("memo entries must be a whole number >= 1");
    const bytes = options.bytes ?? DEFAULT_MEMO_BYTES;
    if (!Number.isInteger(bytes) || bytes < 1) throw new TypeError("memo bytes must be a whole number >= 1");
    // An entry's size is measured once, when it is admitted (set's size), never by lru-cache.
    this.lru = new LRUCache<string, Decision>({ max: options.entries, maxSize: bytes });
    this.counts = options.counts ?? { hits: 0, misses: 0 };
    const slots = 2 ** Math.ceil(Math.log2(options.entries));
    this.seen = new Int32Array(slots);
    this.seenMask = slots - 1;
  }

  get(key: string): Decision | undefined {
    const decision = this.lru.get(key);
    if (decision === undefined) this.counts.misses++;
    else this.counts.hits++;
    return decision;
  }

  /**
   * Offers a decision the policy answered for `key`, just missed. Stored (frozen) when the key was missed before,
   * and still remembered by the doorkeeper; its size is measured only then.
   */
  set(key: string, decision: Decision): Decision {
    // First miss of this key: only remember its hash.
    const hash = fingerprintOf(key);
    const slot = hash & this.seenMask;
    if (this.seen[slot] !== hash) {
      this.seen[slot] = hash;
      return decision;
    }
    const size = 2 * (key.length + JSON.stringify(decision).length) + ENTRY_OVERHEAD_BYTES;
    if (size > this.lru.maxSize) return decision; // larger than the whole bound: never stored
    this.lru.set(key, freezeDecision(decision), { size });
    return decision;
  }
}
