/**
 * A bounded memo of decisions for one engine (one bundle revision: a new bundle makes a new engine and so
 * a new, empty memo). The key is the exact policy input as the JSON text the engine writes into wasm
 * memory, so a lookup costs one hash of a string the engine builds anyway. Least recently used entries go
 * first once either bound (entries, bytes) is reached. Stored decisions are frozen: a caller can read
 * them, never change what the next caller gets.
 * Admission (TinyLFU's "doorkeeper"): a decision is stored the second time its key is missed, not the
 * first; the doorkeeper remembers up to `entries` once-missed keys (strings only). On traffic that never
 * repeats (fresh ids in paths) this stores nothing: storing every miss only to evict it later cost 5-15% of
 * a decision in the benchmark (objects kept past the young generation), the doorkeeper about half of that.
 * The price is one more evaluation per distinct input before it can hit.
 */
import type { Decision } from "./types.js";

export interface DecisionMemoOptions {
  /** Most decisions kept; 0 turns the memo off. */
  entries: number;
  /** Most bytes kept, counted as 2 per UTF-16 unit of key and answer text plus ENTRY_OVERHEAD_BYTES. */
  bytes?: number;
}

export const DEFAULT_MEMO_BYTES = 32 * 1024 * 1024;
/** What an entry costs beyond its strings (map slot, entry object, the decision's objects), estimated. */
export const ENTRY_OVERHEAD_BYTES = 256;
/** What a key the doorkeeper remembers costs beyond its string (set slot, ring slot), estimated. */
const SEEN_OVERHEAD_BYTES = 64;

interface Entry {
  decision: Decision;
  bytes: number;
}

export interface MemoStats {
  hits: number;
  misses: number;
  entries: number;
  bytes: number;
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
  private readonly map = new Map<string, Entry>();
  private readonly maxEntries: number;
  private readonly maxBytes: number;
  private bytes = 0;
  hits = 0;
  misses = 0;
  /**
   * The doorkeeper: keys missed once, at most `entries` of them and a quarter of the byte budget, the
   * oldest forgotten first (a ring queue: no Map iteration, which in V8 walks over deletion holes).
   */
  private readonly seen = new Set<string>();
  private readonly seenRing: (string | undefined)[];
  private seenHead = 0;
  private seenCount = 0;
  private seenBytes = 0;

  constructor(options: DecisionMemoOptions) {
    if (!Number.isInteger(options.entries) || options.entries < 1) throw new TypeError("memo entries must be a whole number >= 1");
    const bytes = options.bytes ?? DEFAULT_MEMO_BYTES;
    if (!Number.isInteger(bytes) || bytes < 1) throw new TypeError("memo bytes must be a whole number >= 1");
    this.maxEntries = options.entries;
    this.maxBytes = bytes;
    this.seenRing = new Array<string | undefined>(options.entries).fill(undefined);
  }

  get(key: string): Decision | undefined {
    const entry = this.map.get(key);
    if (entry === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    // Most recently used last: Map keeps insertion order.
    this.map.delete(key);
    this.map.set(key, entry);
    return entry.decision;
  }

  /**
   * Offers a decision the policy answered for `key`, just missed; `answerLength` is the length of its JSON
   * text. Stored (frozen) when the key was missed before, and still remembered by the doorkeeper.
   */
  set(key: string, decision: Decision, answerLength: number): Decision {
    const bytes = 2 * (key.length + answerLength) + ENTRY_OVERHEAD_BYTES;
    if (bytes > this.maxBytes) return decision;
    // First miss of this key: only remember the key (the same string, so V8 reuses the hash it computed).
    if (!this.seen.has(key)) {
      this.remember(key);
      return decision;
    }
    const old = this.map.get(key);
    if (old !== undefined) {
      this.map.delete(key);
      this.bytes -= old.bytes;
    }
    while (this.map.size >= this.maxEntries || this.bytes + bytes > this.maxBytes) {
      const oldest = this.map.entries().next().value as [string, Entry];
      this.map.delete(oldest[0]);
      this.bytes -= oldest[1].bytes;
    }
    this.map.set(key, { decision: freezeDecision(decision), bytes });
    this.bytes += bytes;
    return decision;
  }

  private remember(key: string): void {
    const cost = 2 * key.length + SEEN_OVERHEAD_BYTES;
    const budget = this.maxBytes / 4;
    if (cost > budget) return;
    const n = this.seenRing.length;
    while (this.seenCount === n || this.seenBytes + cost > budget) {
      const oldest = (this.seenHead - this.seenCount + n) % n;
      const forgotten = this.seenRing[oldest] as string;
      this.seenRing[oldest] = undefined;
      this.seen.delete(forgotten);
      this.seenBytes -= 2 * forgotten.length + SEEN_OVERHEAD_BYTES;
      this.seenCount--;
    }
    this.seenRing[this.seenHead] = key;
    this.seenHead = this.seenHead + 1 === n ? 0 : this.seenHead + 1;
    this.seenCount++;
    this.seenBytes += cost;
    this.seen.add(key);
  }

  stats(): MemoStats {
    return { hits: this.hits, misses: this.misses, entries: this.map.size, bytes: this.bytes };
  }
}
