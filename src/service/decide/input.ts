/**
 * Stage 3, the policy input: what the engine evaluates (policies/input.schema.json), from the request's method
 * and normalised path, the verified claims' facts and the caller's roles. The same value goes to the log line,
 * so that `portier replay` can evaluate it again under another policy.
 */
import { tokenFacts } from "../../engine/index.js";
import type { DecisionInput, RoleCheckMode, TokenShape } from "../../engine/types.js";
import type { Caller } from "./subject.js";

export function decisionInput(
  method: string,
  path: string,
  claims: Record<string, unknown>,
  caller: Caller,
  mode: RoleCheckMode,
  shape?: TokenShape,
): DecisionInput {
  return {
    method: method.toUpperCase(),
    path,
    token: tokenFacts(claims, shape),
    roles: caller.subject.roles,
    synced: caller.synced,
    role_check: mode,
  };
}
