/**
 * Stage 5, answer: fail closed (no decision at all is 403 internal_error; only a well-formed allow, allow
 * true with status 200, is an allow; any other answer is a 401 or a 403) and the answer's shape: the
 * decision id, the decision, the subject and, on a 401, the WWW-Authenticate value. The decision's internal
 * `detail` never goes into the answer (decide.ts keeps it for the log line).
 */
import { engineDeny } from "../../engine/index.js";
import type { Decision, RoleCheckMode } from "../../engine/types.js";
import type { DecisionAnswer, Subject } from "./types.js";

export function shapeAnswer(
  decided: Decision | undefined,
  decisionId: string,
  subject: Subject | null,
  www: string | undefined,
  mode: RoleCheckMode,
): DecisionAnswer {
  // No stage decided (a verifier that answered no claims): deny.
  let decision = decided ?? engineDeny("internal_error", "the decision could not be made", mode, 403);
  if (decision.allow !== true || decision.status !== 200)
    decision = { ...decision, allow: false, status: decision.status === 401 ? 401 : 403 };
  // Only engine denies carry a detail: an allow or a policy deny is copied once, below, not first stripped into
  // another object.
  if (decision.detail !== undefined) {
    const { detail: _logged, ...rest } = decision;
    decision = rest;
  }
  return {
    decision_id: decisionId,
    ...decision,
    subject,
    ...(www !== undefined ? { www_authenticate: www } : {}),
  };
}
