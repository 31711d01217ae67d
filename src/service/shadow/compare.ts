/**
 * How a shadow candidate's decision differs from the enforced answer: the four kinds counted by
 * portier_shadow_decisions_total{change}. The candidate's decision is read failing closed, as the enforced one
 * is (only allow true with status 200 allows), so a candidate that errors on an input counts as a deny.
 */
import type { Decision } from "../../engine/types.js";

export type ShadowChange = "new_allow" | "new_deny" | "other_reason" | "same";

export const SHADOW_CHANGES: readonly ShadowChange[] = ["new_allow", "new_deny", "other_reason", "same"];

/** What is compared of a decision: allowed or not, and its reason. */
export interface Verdict {
  allow: boolean;
  reason: string;
}

/** The candidate's decision as the answer stage would read it (fail closed). */
export function candidateVerdict(decision: Decision): Verdict {
  return { allow: decision.allow === true && decision.status === 200, reason: String(decision.reason) };
}

/** new_allow: the candidate allows what was denied; new_deny: the reverse; other_reason: same result, other reason. */
export function compareVerdicts(enforced: Verdict, candidate: Verdict): ShadowChange {
  if (enforced.allow !== candidate.allow) return candidate.allow ? "new_allow" : "new_deny";
  return enforced.reason === candidate.reason ? "same" : "other_reason";
}
