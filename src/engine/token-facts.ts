/**
 * Picks from verified token claims the few facts the policy reads (see policies/input.schema.json),
 * so that the input marshalled into wasm stays small. List claims become arrays; wrong types are
 * passed through unchanged so that input validation refuses them (fail closed), not silently dropped.
 * The subject and the tenant are read from the claims the project names (TokenShape; the spec's: sub and
 * tenant_id) and passed as sub and tenant_id, whatever their claims are called; a project without a tenant
 * claim passes no tenant_id.
 */
import { SPEC_TOKEN_SHAPE } from "./catalog-token-shape.js";
import type { TokenFacts, TokenShape } from "./types.js";

/** The facts passed, in this order: each is the claim of its own name but sub and tenant_id (the project's). */
const PASSED = ["sub", "client_id", "auth_time", "idp", "tenant_id", "nonce", "at_hash", "s_hash"] as const;

/** A claim the token itself carries (never one inherited from Object.prototype: "constructor" is a name too). */
export function ownClaim(claims: Record<string, unknown>, name: string | null): unknown {
  return name !== null && Object.hasOwn(claims, name) ? claims[name] : undefined;
}

function asList(value: unknown): unknown {
  if (typeof value === "string") return value.split(" ").filter((s) => s !== "");
  return value;
}

export function tokenFacts(claims: Record<string, unknown>, shape: TokenShape = SPEC_TOKEN_SHAPE): TokenFacts {
  const facts: Record<string, unknown> = {};
  for (const name of PASSED) {
    const claim = name === "sub" ? shape.subjectClaim : name === "tenant_id" ? shape.tenantClaim : name;
    const value = ownClaim(claims, claim);
    if (value !== undefined) facts[name] = value;
  }
  if (claims.aud !== undefined) facts.aud = typeof claims.aud === "string" ? [claims.aud] : claims.aud;
  if (claims.scope !== undefined) facts.scope = asList(claims.scope);
  return facts;
}
