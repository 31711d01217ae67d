/**
 * POST /access/v1/evaluations: the top-level subject, action, resource and context are defaults, each replaced
 * whole by an item's own; the answers come in request order. options.evaluations_semantic: execute_all (the
 * default) answers every item; deny_on_first_deny stops after the first false, permit_on_first_permit after the
 * first true (the answer then holds the items evaluated, the last one being the one that stopped the batch). Items
 * are evaluated one after another in the calling thread, so each is a decision recorded in order.
 */
import type { EvaluationsBody } from "./parse-body.js";
import type { AuthzenDecision, EvaluationRequest } from "./types.js";

const PARTS = ["subject", "action", "resource", "context"] as const;
const REQUIRED = ["subject", "action", "resource"] as const;

/** Each item with the defaults merged, or the first item missing a required part (a 400 naming it). */
export function mergeDefaults(
  body: EvaluationsBody,
): { ok: true; items: EvaluationRequest[] } | { ok: false; error: string } {
  const items: EvaluationRequest[] = [];
  for (const [i, item] of (body.evaluations ?? []).entries()) {
    const merged: Record<string, unknown> = {};
    for (const part of PARTS) {
      const value = item[part] ?? body[part];
      if (value !== undefined) merged[part] = value;
    }
    const missing = REQUIRED.find((part) => merged[part] === undefined);
    if (missing)
      return {
        ok: false,
        error: `body.evaluations.${i}.${missing}: is required (in the item or as a top-level default)`,
      };
    items.push(merged as unknown as EvaluationRequest);
  }
  return { ok: true, items };
}

export function evaluateBatch(
  items: EvaluationRequest[],
  semantic: NonNullable<EvaluationsBody["options"]>["evaluations_semantic"],
  evaluate: (item: EvaluationRequest) => AuthzenDecision,
): AuthzenDecision[] {
  const answers: AuthzenDecision[] = [];
  for (const item of items) {
    const answer = evaluate(item);
    answers.push(answer);
    if (semantic === "deny_on_first_deny" && !answer.decision) break;
    if (semantic === "permit_on_first_permit" && answer.decision) break;
  }
  return answers;
}
