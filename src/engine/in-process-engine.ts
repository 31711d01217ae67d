/**
 * The decision engine inside the calling thread: validates the input, evaluates portier/decision through
 * a PolicyInstance, and checks the answer's shape. Every failure is a deny with a reason (fail closed).
 */
import type { Bundle } from "./read-bundle.js";
import { PolicyInstance } from "./policy-instance.js";
import { inputProblem } from "./validate-input.js";
import { engineDeny, errorDeny } from "./deny.js";
import { PolicyEvaluationError } from "./errors.js";
import { catalogRoles } from "./catalog-roles.js";
import type { CatalogRole, Decision, DecisionEngine, DecisionInput, RoleCheckMode } from "./types.js";

export const DECISION_ENTRYPOINT = "portier/decision";
export const CATALOG_ENTRYPOINT = "portier/catalog";

function modeOf(input: unknown): RoleCheckMode {
  return (input as { role_check?: unknown } | null)?.role_check === "audit" ? "audit" : "enforce";
}

/** Checks that what the policy answered is a decision document; returns a problem or null. */
function decisionProblem(value: unknown): string | null {
  if (typeof value !== "object" || value === null) return "the policy answered no decision object";
  const d = value as Partial<Decision>;
  if (typeof d.allow !== "boolean") return "decision.allow is not a boolean";
  if (d.status !== 200 && d.status !== 401 && d.status !== 403) return "decision.status is not 200, 401 or 403";
  if (d.allow !== (d.status === 200)) return "decision.allow disagrees with decision.status";
  if (typeof d.reason !== "string" || typeof d.message !== "string") return "decision.reason or decision.message is not a string";
  return null;
}

export class InProcessEngine implements DecisionEngine {
  readonly revision: string;
  readonly manifest: Bundle["manifest"];
  readonly roles: readonly CatalogRole[];
  private readonly instance: PolicyInstance;

  constructor(bundle: Bundle, source: string) {
    this.revision = bundle.revision;
    this.manifest = bundle.manifest;
    this.instance = new PolicyInstance(bundle, source);
    this.roles = catalogRoles(bundle.data, source);
  }

  get traps(): number {
    return this.instance.traps;
  }

  decideSync(input: DecisionInput): Decision {
    const problem = inputProblem(input);
    if (problem) return engineDeny("input_invalid", problem, modeOf(input));
    const outcome = this.instance.evaluate(DECISION_ENTRYPOINT, input);
    // The wasm's own text is the detail (logged), never the answer's message.
    if (!outcome.ok) return errorDeny(new PolicyEvaluationError(`policy evaluation failed: ${outcome.error}`), modeOf(input));
    const results = outcome.results as { result?: unknown }[];
    const value = Array.isArray(results) ? results[0]?.result : undefined;
    const shape = decisionProblem(value);
    if (shape) return errorDeny(new PolicyEvaluationError(shape), modeOf(input));
    return value as Decision;
  }

  decide(input: DecisionInput): Promise<Decision> {
    return Promise.resolve(this.decideSync(input));
  }

  /** Raw evaluation of another entrypoint (review tools); throws on failure. */
  query(entrypoint: string, input: unknown = {}): unknown {
    const outcome = this.instance.evaluate(entrypoint, input);
    if (!outcome.ok) throw new PolicyEvaluationError(`evaluating ${entrypoint} failed: ${outcome.error}`);
    return (outcome.results as { result?: unknown }[])[0]?.result;
  }

  async close(): Promise<void> {}
}
