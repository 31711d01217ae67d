/**
 * The decision engine inside the calling thread: validates the input, evaluates portier/decision through
 * a PolicyInstance, and checks the answer's shape. Every failure is a deny with a reason (fail closed).
 * With a decision memo, a well-formed answer is kept under the input's exact JSON text (the text given to
 * the policy) and answered again for the same text; denies the engine makes itself are never kept.
 */
import type { Bundle } from "./read-bundle.js";
import { logRulesOf, readsOf, type LogRules } from "./log-rules.js";
import { PolicyInstance, resultOf, type PolicyLoader } from "./policy-instance.js";
import { inputProblem } from "./validate-input.js";
import { engineDeny, errorDeny } from "./deny.js";
import { EngineLoadError, PolicyEvaluationError } from "./errors.js";
import { catalogRoles } from "./catalog-roles.js";
import { catalogTemplates } from "./catalog-templates.js";
import { catalogTokenShape } from "./catalog-token-shape.js";
import { DecisionMemo, type DecisionMemoOptions } from "./decision-memo.js";
import type { CatalogRole, Decision, DecisionEngine, DecisionInput, RoleCheckMode, TokenShape } from "./types.js";

export const DECISION_ENTRYPOINT = "portier/decision";
export const CATALOG_ENTRYPOINT = "portier/catalog";

function modeOf(input: unknown): RoleCheckMode {
  return typeof input === "object" && input !== null && "role_check" in input && input.role_check === "audit"
    ? "audit"
    : "enforce";
}

/** Checks that what the policy answered is a decision document; returns a problem or null. */
function decisionProblem(value: unknown): string | null {
  if (typeof value !== "object" || value === null) return "the policy answered no decision object";
  const d = value as Partial<Decision>;
  if (typeof d.allow !== "boolean") return "decision.allow is not a boolean";
  if (d.status !== 200 && d.status !== 401 && d.status !== 403) return "decision.status is not 200, 401 or 403";
  if (d.allow !== (d.status === 200)) return "decision.allow disagrees with decision.status";
  if (typeof d.reason !== "string" || typeof d.message !== "string")
    return "decision.reason or decision.message is not a string";
  return null;
}

export interface InProcessEngineOptions {
  /** Keep decisions (entries > 0) or not (absent or entries 0). */
  memo?: DecisionMemoOptions | undefined;
  /** How the compiled module becomes a policy (default: the SDK's loadPolicySync); tests wrap it. */
  load?: PolicyLoader | undefined;
}

export class InProcessEngine implements DecisionEngine {
  readonly revision: string;
  readonly manifest: Bundle["manifest"];
  readonly roles: readonly CatalogRole[];
  readonly templates: readonly string[];
  readonly tokenShape: TokenShape;
  private readonly instance: PolicyInstance;
  /** The bundle's decision-log mask and drop rules (portier/log/mask, portier/log/drop), if it has them. */
  readonly logRules: LogRules | undefined;
  private readonly decisionId: number;
  private readonly memo: DecisionMemo | undefined;

  constructor(bundle: Bundle, source: string, options: InProcessEngineOptions = {}) {
    const { memo } = options;
    this.revision = bundle.revision;
    this.manifest = bundle.manifest;
    this.instance = new PolicyInstance(bundle, source, options.load);
    this.roles = catalogRoles(bundle.data, source);
    this.templates = catalogTemplates(bundle.data);
    this.tokenShape = catalogTokenShape(bundle.data, source);
    const id = this.instance.entrypointId(DECISION_ENTRYPOINT);
    if (id === undefined)
      throw new EngineLoadError(
        "entrypoint_missing",
        `${source}:/policy.wasm: the module has no entrypoint ${DECISION_ENTRYPOINT}`,
      );
    this.decisionId = id;
    this.logRules = logRulesOf(this.instance, readsOf(bundle.data));
    this.memo = memo && memo.entries > 0 ? new DecisionMemo(memo) : undefined;
  }

  decide(input: DecisionInput, json?: string): Decision {
    const problem = inputProblem(input);
    if (problem) return engineDeny("input_invalid", problem, modeOf(input));
    const text = json ?? JSON.stringify(input);
    const memo = this.memo;
    if (memo !== undefined) {
      const known = memo.get(text);
      if (known !== undefined) return known;
    }
    const outcome = this.instance.evaluateJson(this.decisionId, text);
    // The wasm's own text is the detail (logged), never the answer's message.
    if (!outcome.ok)
      return errorDeny(new PolicyEvaluationError(`policy evaluation failed: ${outcome.error}`), modeOf(input));
    const value = resultOf(outcome.results);
    const shape = decisionProblem(value);
    if (shape) return errorDeny(new PolicyEvaluationError(shape), modeOf(input));
    return memo === undefined ? (value as Decision) : memo.set(text, value as Decision);
  }

  /** Raw evaluation of another entrypoint (review tools); throws on failure. */
  query(entrypoint: string, input: unknown = {}): unknown {
    const outcome = this.instance.evaluate(entrypoint, input);
    if (!outcome.ok) throw new PolicyEvaluationError(`evaluating ${entrypoint} failed: ${outcome.error}`);
    return resultOf(outcome.results);
  }
}
