/**
 * How a shadow candidate's decision differs from the enforced answer: the four kinds counted by
 * portier_shadow_decisions_total{change}. The candidate's decision is read failing closed, as the enforced one
 * is (only allow true with status 200 allows), so a candidate that errors on an input counts as a deny.
 */
import type { Decision } from "../../engine/types.js";
import type { Verdict, VerdictChange } from "../../engine/index.js";

export type { Verdict } from "../../engine/index.js";
/** The one comparison of two answers (the engine's, shared with replay): the enforced first, the candidate second. */
export { compareVerdicts } from "../../engine/index.js";
export type ShadowChange = VerdictChange;

export const SHADOW_CHANGES: readonly ShadowChange[] = ["new_allow", "new_deny", "other_reason", "same"];

/** The candidate's decision as the answer stage would read it (fail closed). */
export function candidateVerdict(decision: Decision): Verdict {
  return { allow: decision.allow === true && decision.status === 200, reason: String(decision.reason) };
}
