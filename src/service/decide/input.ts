/**
 * Stage 3, the policy input: what the engine evaluates (policies/input.schema.json), from the request's method
 * and normalised path, the verified claims' facts and the caller's roles. The same value goes to the log line,
 * so that `portier replay` can evaluate it again under another policy. A verified token's claims are one frozen
 * object for as long as the verifier caches the token, so its facts are picked once per claims object (a WeakMap,
 * gone with the claims) and shared, frozen, by every input of that token.
 */
import { tokenFacts } from "../../engine/index.js";
import type { DecisionInput, RoleCheckMode, TokenFacts } from "../../engine/types.js";
import type { Caller } from "./subject.js";

const factsOfClaims = new WeakMap<Record<string, unknown>, TokenFacts>();

function factsOf(claims: Record<string, unknown>): TokenFacts {
  let facts = factsOfClaims.get(claims);
  if (facts === undefined) {
    facts = tokenFacts(claims);
    for (const value of Object.values(facts)) if (Array.isArray(value)) Object.freeze(value);
    factsOfClaims.set(claims, Object.freeze(facts));
  }
  return facts;
}

export function decisionInput(
  method: string,
  path: string,
  claims: Record<string, unknown>,
  caller: Caller,
  mode: RoleCheckMode,
): DecisionInput {
  return {
    method: method.toUpperCase(),
    path,
    token: factsOf(claims),
    roles: caller.subject.roles,
    synced: caller.synced,
    role_check: mode,
  };
}
