/**
 * Stage 4, answer: fail closed (no decision at all is 403 internal_error; only a well-formed allow, allow
 * true with status 200, is an allow; any other answer is a 401 or a 403) and the answer's shape: the
 * decision id, the decision, the subject and, on a 401, the WWW-Authenticate value.
 */
import { engineDeny } from "../../engine/index.js";
import type { Decision } from "../../engine/types.js";
import type { DecisionRun } from "./run.js";
import type { DecisionAnswer } from "./types.js";

export function shapeAnswer(run: DecisionRun, decided: Decision | undefined): DecisionAnswer {
  // No stage decided (a verifier that answered no claims): deny.
  let decision = decided ?? engineDeny("internal_error", "the decision could not be made", run.mode, 403);
  if (decision.allow !== true || decision.status !== 200)
    decision = { ...decision, allow: false, status: decision.status === 401 ? 401 : 403 };
  // The internal detail goes to the log line (through the run), never into the answer. Only engine denies carry
  // one: an allow or a policy deny is copied once, below, not first stripped into another object.
  if (decision.detail !== undefined) {
    const { detail, ...rest } = decision;
    run.detail = detail;
    decision = rest;
  }
  return {
    decision_id: run.decision_id,
    ...decision,
    subject: run.subject,
    ...(run.www !== undefined ? { www_authenticate: run.www } : {}),
  };
}
