/**
 * The bundle's decision-log rules, as OPA's system.log.mask and system.log.drop: the policies' portier.log
 * package answers both for a decision log event in one document (one evaluation per event). A bundle without
 * it (an older one) has none: every event is kept whole.
 */
import type { PolicyInstance } from "./policy-instance.js";
import { PolicyEvaluationError } from "./errors.js";

/** mask and drop of the portier.log package in one document: {"drop": bool, "mask": set}. */
export const LOG_RULES_ENTRYPOINT = "portier/log/rules";

/** The rules' answer for one event; each rule takes the event as its JSON text (encoded once, then shipped). */
export interface LogRules {
  /** Throws PolicyEvaluationError when evaluation fails (a rule's conflict, a builtin's error). */
  evaluate(eventJson: string): { drop: unknown; mask: unknown };
}

/** The rules of the instance's module, or undefined when it has no portier/log/rules entrypoint. */
export function logRulesOf(instance: PolicyInstance): LogRules | undefined {
  const id = instance.entrypointId(LOG_RULES_ENTRYPOINT);
  if (id === undefined) return undefined;
  return {
    evaluate(json) {
      const outcome = instance.evaluateJson(id, json);
      if (!outcome.ok) throw new PolicyEvaluationError(`evaluating ${LOG_RULES_ENTRYPOINT} failed: ${outcome.error}`);
      const results = outcome.results;
      const value = Array.isArray(results) ? (results[0] as { result?: unknown } | undefined)?.result : undefined;
      if (typeof value !== "object" || value === null)
        throw new PolicyEvaluationError(`${LOG_RULES_ENTRYPOINT}: no {drop, mask} document (a rule is undefined)`);
      const { drop, mask } = value as { drop?: unknown; mask?: unknown };
      return { drop, mask };
    },
  };
}
