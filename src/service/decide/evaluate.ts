/**
 * Stage 3, evaluate: the normalised path (refused here, after the token: 403 path_invalid), the policy input
 * and the engine's decision (no policy loaded: 403 policy_unavailable), answered in the calling thread.
 * The input and the revision that decided go on the run for the log.
 */
import { engineDeny, tokenFacts } from "../../engine/index.js";
import type { Decision, DecisionEngine, DecisionInput } from "../../engine/types.js";
import type { Caller } from "./subject.js";
import type { DecisionRun } from "./run.js";

export function evaluate(
  run: DecisionRun,
  claims: Record<string, unknown>,
  caller: Caller,
  engine: DecisionEngine | undefined,
): Decision {
  if (!run.normalised.ok) return engineDeny("path_invalid", run.normalised.message, run.mode, 403);
  if (!engine) return engineDeny("policy_unavailable", "no policy is loaded", run.mode, 403);
  const input: DecisionInput = {
    method: run.req.method.toUpperCase(),
    path: run.normalised.path,
    token: tokenFacts(claims),
    roles: caller.subject.roles,
    synced: caller.synced,
    role_check: run.mode,
  };
  run.input = input;
  run.revision = engine.revision;
  return engine.decide(input);
}
