/**
 * Bounded LRU of verified access tokens, keyed by SHA-256 of the token (the token itself is not kept
 * as a key). Entries die with the token's exp, and all entries signed by a kid go when that key is removed.
 */
import { hash } from "node:crypto";
import type { VerifiedAccessToken } from "./types.js";

export interface CacheEntry {
  value: VerifiedAccessToken;
  exp: number;
  /** keyId() of the key that verified it. */
  kid: string;
}

export class VerifiedTokenCache {
  private map = new Map<string, CacheEntry>();
  constructor(private readonly max: number) {}

  static keyOf(token: string): string {
    // One-shot hash (Node >= 20.12): a third cheaper than createHash().update().digest(), on every request.
    return hash("sha256", token, "base64url");
  }

  get size(): number {
    return this.map.size;
  }

  get(key: string): CacheEntry | undefined {
    const e = this.map.get(key);
    if (!e) return undefined;
    this.map.delete(key); // move to most-recent
    this.map.set(key, e);
    return e;
  }

  delete(key: string): void {
    this.map.delete(key);
  }

  set(key: string, entry: CacheEntry): void {
    if (this.max <= 0) return;
    this.map.delete(key);
    this.map.set(key, entry);
    while (this.map.size > this.max) {
      const oldest = this.map.keys().next();
      if (oldest.done) break;
      this.map.delete(oldest.value);
    }
  }

  /** Forget everything signed by these kids (key rotation / revocation). */
  dropKids(kids: readonly string[]): void {
    const gone = new Set(kids);
    for (const [k, e] of this.map) if (gone.has(e.kid)) this.map.delete(k);
  }

  clear(): void {
    this.map.clear();
  }
}
