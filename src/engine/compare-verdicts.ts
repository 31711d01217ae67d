/**
 * How one decision's answer differs from another's, the one comparison of the shadow candidate (counted by
 * portier_shadow_decisions_total{change}), of `portier replay` and `portier review` (a logged decision replayed
 * under a candidate) and of the shadow report: allowed or not first, then the reason.
 */

/** What is compared of a decision: allowed or not, and its reason. */
export interface Verdict {
  allow: boolean;
  reason: string;
}

/** new_allow: the second allows what the first denied; new_deny: the reverse; other_reason: same, another reason. */
export type VerdictChange = "new_allow" | "new_deny" | "other_reason" | "same";

export function compareVerdicts(first: Verdict, second: Verdict): VerdictChange {
  if (first.allow !== second.allow) return second.allow ? "new_allow" : "new_deny";
  return first.reason === second.reason ? "same" : "other_reason";
}
