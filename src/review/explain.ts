/**
 * Explains one decision for a reviewer: builds the input a caller with the given role(s), flow and
 * tenant would produce (or takes a decision input as logged), normalises the path as the service does,
 * and renders the decision in words with every check of the policy in order, each with its outcome.
 */
import {
  applicationTokenFacts,
  CATALOG_ENTRYPOINT,
  normalisePath,
  engineDeny,
  SPEC_TOKEN_SHAPE,
  type TokenShape,
  type Decision,
  type DecisionInput,
  type InProcessEngine,
  type RoleCheckMode,
} from "../engine/index.js";

const CHECKS_ENTRYPOINT = "portier/explain/checks";

export interface ExplainRequest {
  method: string;
  path: string;
  flow: "accessCode" | "application";
  roles: string[];
  synced: boolean;
  tenantId?: string | undefined;
  mode: RoleCheckMode;
}

export interface CheckOutcome {
  check: string;
  outcome: "pass" | "fail" | "not_applicable";
  reason: string;
  message: string;
}

export interface Explanation {
  decision: Decision;
  /** Every check in the policy's order; empty when the path was refused before the policy. */
  checks: CheckOutcome[];
  /** Hints for the reviewer (e.g. a tenant mismatch with no --tenant given). */
  hints: string[];
  /** How the project names its role list (data/project.json), for "relied on ..." when decision.deprecated. */
  roleList: string;
}

/** The wording of bundles built before projects named their role list: the spec's, then the only project. */
const SPEC_ROLE_LIST = "the deprecated role list of spec 4.3";

/** How the bundle's project names its role list (portier/catalog role_list.name). */
function roleListName(engine: InProcessEngine): string {
  try {
    const catalog = engine.query(CATALOG_ENTRYPOINT) as { role_list?: { name?: unknown } } | null;
    const name = catalog?.role_list?.name;
    return typeof name === "string" ? name : SPEC_ROLE_LIST;
  } catch {
    return SPEC_ROLE_LIST;
  }
}

/** `shape`: the bundle's project's token shape, whose application token the application caller carries. */
export function explainInput(req: ExplainRequest, path: string, shape: TokenShape = SPEC_TOKEN_SHAPE): DecisionInput {
  const tenant = req.tenantId ? { tenant_id: req.tenantId } : {};
  const token =
    req.flow === "application"
      ? { client_id: "explain", ...applicationTokenFacts(shape), ...tenant }
      : {
          sub: "00000000-0000-4000-8000-00000000e000",
          auth_time: 1,
          idp: "explain",
          scope: ["openid", "apiclients"],
          ...tenant,
        };
  return {
    method: req.method.toUpperCase(),
    path,
    token,
    roles: req.flow === "application" ? [] : req.roles,
    synced: req.synced,
    role_check: req.mode,
  };
}

export function explain(engine: InProcessEngine, req: ExplainRequest): Decision {
  const normalised = normalisePath(req.path);
  if (!normalised.ok) return engineDeny("path_invalid", normalised.message, req.mode);
  return engine.decide(explainInput(req, normalised.path, engine.tokenShape));
}

/** The decision for an input as the service built it, every check's outcome, and hints. */
export function explainDecisionInput(engine: InProcessEngine, input: DecisionInput, hints: string[] = []): Explanation {
  const decision = engine.decide(input);
  let checks: CheckOutcome[] = [];
  try {
    const value = engine.query(CHECKS_ENTRYPOINT, input);
    if (Array.isArray(value)) checks = value as CheckOutcome[];
  } catch {
    hints.push(
      `this bundle has no ${CHECKS_ENTRYPOINT} entrypoint (built by an older Portier): only the first ` +
        `failing check is shown`,
    );
  }
  const tenantFailed =
    decision.reason === "tenant_mismatch" || checks.some((c) => c.outcome === "fail" && c.reason === "tenant_mismatch");
  if (tenantFailed && input.token.tenant_id === undefined) {
    hints.push("the caller has no tenant: pass --tenant <tenant_id> to explain a call of a given tenant");
  }
  return { decision, checks, hints, roleList: roleListName(engine) };
}

/** Like explain(), with the checks and hints; a refused path is answered before the policy. */
export function explainRequest(engine: InProcessEngine, req: ExplainRequest): Explanation {
  const normalised = normalisePath(req.path);
  if (!normalised.ok)
    return {
      decision: engineDeny("path_invalid", normalised.message, req.mode),
      checks: [],
      hints: [],
      roleList: roleListName(engine),
    };
  return explainDecisionInput(engine, explainInput(req, normalised.path, engine.tokenShape));
}

const OUTCOME_WORD: Record<CheckOutcome["outcome"], string> = { pass: "pass", fail: "FAIL", not_applicable: "n/a " };

export function renderExplanation(req: { method: string; path: string; who: string }, e: Explanation): string {
  const { decision: d, checks, hints } = e;
  const lines = [
    `${d.allow ? "ALLOW" : "DENY"} ${req.method.toUpperCase()} ${req.path} for ${req.who}`,
    `  status:     ${d.status}`,
    `  reason:     ${d.reason}`,
    `  why:        ${d.message}`,
    // An engine deny's internal detail (a wasm trap): the terminal is the operator's, never a caller's.
    ...(d.detail !== undefined ? [`  detail:     ${d.detail}`] : []),
    `  flow:       ${d.flow ?? "(none)"}`,
    `  route:      ${d.route ? `${d.route.template} (${d.route.product} / ${d.route.api})` : "(none)"}`,
  ];
  if (d.route && Object.keys(d.route.parameters).length > 0) {
    lines.push(
      `  parameters: ${Object.entries(d.route.parameters)
        .map(([k, v]) => `${k}=${v}`)
        .join(", ")}`,
    );
  }
  lines.push(`  deprecated: ${d.deprecated ? `yes (relied on ${e.roleList})` : "no"}`);
  if (d.would_deny) lines.push(`  audit:      would deny: ${d.would_deny.reason} (${d.would_deny.message})`);
  if (checks.length > 0) {
    lines.push("  checks, in the policy's order:");
    const width = Math.max(...checks.map((c) => c.check.length));
    for (const c of checks)
      lines.push(
        `    ${OUTCOME_WORD[c.outcome]}  ${c.check.padEnd(width)}  ${c.reason ? `${c.reason}: ` : ""}${c.message}`,
      );
  }
  for (const h of hints) lines.push(`  hint:       ${h}`);
  return lines.join("\n") + "\n";
}

/** Who the request describes, in words. */
export function describeCaller(req: ExplainRequest): string {
  return req.flow === "application"
    ? "an application token"
    : `a user token with role(s) [${req.roles.join(", ")}]${req.synced ? "" : ", not synced"}`;
}
