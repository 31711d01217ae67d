/**
 * at_hash / s_hash (OpenID Connect Core 3.1.3.6): the left-most half of the hash that matches the JWS alg,
 * base64url. The issuer computes them, validateIdToken checks them.
 */
import { createHash } from "node:crypto";
import { TokenError } from "./token-error.js";

/** SHA-256 for *256, SHA-384 for *384, SHA-512 for *512, of the ASCII value. */
export function halfHash(value: string, alg: string): string {
  const bits = /(256|384|512)$/.exec(alg)?.[1];
  if (!bits) throw new TokenError("alg_not_allowed", "no hash is defined for this algorithm");
  const digest = createHash(`sha${bits}`).update(value, "ascii").digest();
  return digest.subarray(0, digest.length / 2).toString("base64url");
}
