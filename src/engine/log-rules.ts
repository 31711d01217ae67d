/**
 * The bundle's decision-log rules, as OPA's system.log.mask and system.log.drop: two entrypoints of the
 * policies' portier.log package, each evaluated with a decision log event as its input. A bundle without them
 * (an older one) has none: every event is kept whole.
 */
import type { PolicyInstance } from "./policy-instance.js";
import { PolicyEvaluationError } from "./errors.js";

export const MASK_ENTRYPOINT = "portier/log/mask";
export const DROP_ENTRYPOINT = "portier/log/drop";

export interface LogRules {
  /** True when the event is to be left out. Throws PolicyEvaluationError when the rule fails. */
  drop(event: unknown): boolean;
  /** The mask rule's value (undefined when it is not defined). Throws PolicyEvaluationError when it fails. */
  mask(event: unknown): unknown;
}

function valueOf(instance: PolicyInstance, entrypoint: string, input: unknown): unknown {
  const outcome = instance.evaluate(entrypoint, input);
  if (!outcome.ok) throw new PolicyEvaluationError(`evaluating ${entrypoint} failed: ${outcome.error}`);
  const results = outcome.results;
  return Array.isArray(results) ? (results[0] as { result?: unknown } | undefined)?.result : undefined;
}

/** The rules of the instance's module, or undefined when it has neither entrypoint. */
export function logRulesOf(instance: PolicyInstance): LogRules | undefined {
  const hasMask = instance.entrypointId(MASK_ENTRYPOINT) !== undefined;
  const hasDrop = instance.entrypointId(DROP_ENTRYPOINT) !== undefined;
  if (!hasMask && !hasDrop) return undefined;
  return {
    drop: (event) => hasDrop && valueOf(instance, DROP_ENTRYPOINT, event) === true,
    mask: (event) => (hasMask ? valueOf(instance, MASK_ENTRYPOINT, event) : undefined),
  };
}
