/**
 * Picks from verified token claims the few facts the policy reads (see policies/input.schema.json),
 * so that the input marshalled into wasm stays small. List claims become arrays; wrong types are
 * passed through unchanged so that input validation refuses them (fail closed), not silently dropped.
 */
import type { TokenFacts } from "./types.js";

const PASSED = ["sub", "client_id", "auth_time", "idp", "tenant_id", "nonce", "at_hash", "s_hash"] as const;

function asList(value: unknown): unknown {
  if (typeof value === "string") return value.split(" ").filter((s) => s !== "");
  return value;
}

export function tokenFacts(claims: Record<string, unknown>): TokenFacts {
  const facts: Record<string, unknown> = {};
  for (const name of PASSED) {
    if (claims[name] !== undefined) facts[name] = claims[name];
  }
  if (claims.aud !== undefined) facts.aud = typeof claims.aud === "string" ? [claims.aud] : claims.aud;
  if (claims.scope !== undefined) facts.scope = asList(claims.scope);
  return facts;
}
