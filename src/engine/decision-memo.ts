/**
 * A bounded memo of decisions for one engine (one bundle revision: a new bundle makes a new engine and so
 * a new, empty memo). The key is the exact policy input as the JSON text the engine writes into wasm
 * memory, so a lookup costs one hash of a string the engine builds anyway. Least recently used entries go
 * first once either bound (entries, bytes) is reached. Stored decisions are frozen: a caller can read
 * them, never change what the next caller gets.
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

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

export class DecisionMemo {
  private readonly map = new Map<string, Entry>();
  private readonly maxEntries: number;
  private readonly maxBytes: number;
  private bytes = 0;
  hits = 0;
  misses = 0;

  constructor(options: DecisionMemoOptions) {
    if (!Number.isInteger(options.entries) || options.entries < 1) throw new TypeError("memo entries must be a whole number >= 1");
    const bytes = options.bytes ?? DEFAULT_MEMO_BYTES;
    if (!Number.isInteger(bytes) || bytes < 1) throw new TypeError("memo bytes must be a whole number >= 1");
    this.maxEntries = options.entries;
    this.maxBytes = bytes;
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

  /** Stores a decision the policy answered for `key`; `answerLength` is the length of its JSON text. Returns it frozen. */
  set(key: string, decision: Decision, answerLength: number): Decision {
    const bytes = 2 * (key.length + answerLength) + ENTRY_OVERHEAD_BYTES;
    if (bytes > this.maxBytes) return decision;
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
    this.map.set(key, { decision: deepFreeze(decision), bytes });
    this.bytes += bytes;
    return decision;
  }

  stats(): MemoStats {
    return { hits: this.hits, misses: this.misses, entries: this.map.size, bytes: this.bytes };
  }
}
