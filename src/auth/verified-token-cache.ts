/**
 * Bounded LRU (lru-cache) of verified access tokens, keyed by SHA-256 of the token (the token itself is not kept
 * as a key). Entries die with the token's exp, and all entries signed by a kid go when that key is removed.
 */
import { hash } from "node:crypto";
import { LRUCache } from "lru-cache";
import type { VerifiedAccessToken } from "./types.js";

export interface CacheEntry {
  value: VerifiedAccessToken;
  exp: number;
  /** keyId() of the key that verified it. */
  kid: string;
}

export class VerifiedTokenCache {
  /** undefined when the cache is off (a size of 0). */
  private readonly lru: LRUCache<string, CacheEntry> | undefined;
  constructor(max: number) {
    this.lru = max > 0 ? new LRUCache<string, CacheEntry>({ max }) : undefined;
  }

  static keyOf(token: string): string {
    // One-shot hash (Node >= 20.12): a third cheaper than createHash().update().digest(), on every request.
    return hash("sha256", token, "base64url");
  }

  get size(): number {
    return this.lru?.size ?? 0;
  }

  /** The entry, made the most recently used. */
  get(key: string): CacheEntry | undefined {
    return this.lru?.get(key);
  }

  delete(key: string): void {
    this.lru?.delete(key);
  }

  /** Stores the entry; past the bound the least recently used one goes. */
  set(key: string, entry: CacheEntry): void {
    this.lru?.set(key, entry);
  }

  /** Forget everything signed by these kids (key rotation / revocation). */
  dropKids(kids: readonly string[]): void {
    if (this.lru === undefined) return;
    const gone = new Set(kids);
    const drop: string[] = [];
    for (const [k, e] of this.lru.entries()) if (gone.has(e.kid)) drop.push(k);
    for (const k of drop) this.lru.delete(k);
  }

  clear(): void {
    this.lru?.clear();
  }
}
