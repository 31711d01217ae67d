/**
 * Stage 5, answer: fail closed (only a well-formed allow, allow true with status 200, is an allow; any other
 * answer is a 401 or a 403) and the answer's shape: the decision id, the decision, the subject, on a 401 the
 * WWW-Authenticate value, and whether Portier failed to decide. The decision's internal
 * `detail` never goes into the answer (decide.ts keeps it for the log line).
 */
import type { Decision } from "../../engine/types.js";
import type { DecisionRun } from "./run.js";
import type { DecisionAnswer } from "./types.js";

export function shapeAnswer(
  decided: Decision,
  run: Pick<DecisionRun, "decision_id" | "subject" | "www" | "failed">,
): DecisionAnswer {
  let decision = decided;
  if (decision.allow !== true || decision.status !== 200)
    decision = { ...decision, allow: false, status: decision.status === 401 ? 401 : 403 };
  // Only engine denies carry a detail: an allow or a policy deny is copied once, below, not first stripped into
  // another object.
  if (decision.detail !== undefined) {
    const { detail: _logged, ...rest } = decision;
    decision = rest;
  }
  return {
    decision_id: run.decision_id,
    ...decision,
    subject: run.subject,
    ...(run.www !== undefined ? { www_authenticate: run.www } : {}),
    failed: run.failed,
    failure: run.failed ? "internal" : decision.reason === "policy_error" ? "policy" : undefined,
  };
}
