/**
 * Explains one decision for a reviewer: builds the input a caller with the given role(s), flow and
 * tenant would produce, normalises the path as the service does, and renders the decision in words.
 */
import { normalisePath, engineDeny, type Decision, type DecisionInput, type InProcessEngine, type RoleCheckMode } from "../engine/index.js";

export interface ExplainRequest {
  method: string;
  path: string;
  flow: "accessCode" | "application";
  roles: string[];
  synced: boolean;
  tenantId?: string;
  mode: RoleCheckMode;
}

export function explainInput(req: ExplainRequest, path: string): DecisionInput {
  const tenant = req.tenantId ? { tenant_id: req.tenantId } : {};
  const token =
    req.flow === "application"
      ? { client_id: "explain", aud: ["apiclients"], scope: ["apiclients"], ...tenant }
      : { sub: "00000000-0000-4000-8000-00000000e000", auth_time: 1, idp: "explain", scope: ["openid", "apiclients"], ...tenant };
  return { method: req.method.toUpperCase(), path, token, roles: req.flow === "application" ? [] : req.roles, synced: req.synced, role_check: req.mode };
}

export function explain(engine: InProcessEngine, req: ExplainRequest): Decision {
  const normalised = normalisePath(req.path);
  if (!normalised.ok) return engineDeny("path_invalid", normalised.message, req.mode);
  return engine.decideSync(explainInput(req, normalised.path));
}

export function renderExplanation(req: ExplainRequest, d: Decision): string {
  const who = req.flow === "application" ? "an application token" : `a user token with role(s) [${req.roles.join(", ")}]${req.synced ? "" : ", not synced"}`;
  const lines = [
    `${d.allow ? "ALLOW" : "DENY"} ${req.method.toUpperCase()} ${req.path} for ${who}`,
    `  status:     ${d.status}`,
    `  reason:     ${d.reason}`,
    `  why:        ${d.message}`,
    `  flow:       ${d.flow ?? "(none)"}`,
    `  route:      ${d.route ? `${d.route.template} (${d.route.product} / ${d.route.api})` : "(none)"}`,
  ];
  if (d.route && Object.keys(d.route.parameters).length > 0) {
    lines.push(`  parameters: ${Object.entries(d.route.parameters).map(([k, v]) => `${k}=${v}`).join(", ")}`);
  }
  lines.push(`  deprecated: ${d.deprecated ? "yes (relied on the deprecated role list of spec 4.3)" : "no"}`);
  if (d.would_deny) lines.push(`  audit:      would deny: ${d.would_deny.reason} (${d.would_deny.message})`);
  return lines.join("\n") + "\n";
}
