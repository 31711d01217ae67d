/**
 * Constant-time comparison of secrets (passwords, client secrets, PKCE values): both sides are hashed to
 * equal length first, then compared with node's timingSafeEqual.
 */
import { createHash, timingSafeEqual } from "node:crypto";

export function constantTimeEqual(given: string, expected: string): boolean {
  const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();
  return timingSafeEqual(digest(given), digest(expected));
}
