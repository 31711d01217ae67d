/**
 * `portier explain [--role ID]... [--flow accessCode|application] [--not-synced] [--tenant ID] [--audit]
 *  [--bundle FILE] [--json] METHOD PATH`: one decision of the compiled policy, with its reason.
 */
import { join } from "node:path";
import { explain, renderExplanation, loadPolicySource, type ExplainRequest } from "../../review/index.js";
import { PROJECT_ROOT } from "../../toolchain/project-root.js";
import { OPA_OPTION, parse, usageError, type CommandSpec } from "../args.js";

export const SPEC = {
  name: "portier explain",
  positionals: "METHOD PATH",
  summary: "Explains one decision of the compiled policy for a caller described by the options, with its reason.",
  options: {
    role: { type: "string", multiple: true, value: "ID", description: "a role of the caller (role id or spec label)", default: "none" },
    flow: { type: "string", value: "FLOW", description: "the token flow: accessCode (a user) or application", default: "accessCode" },
    "not-synced": { type: "boolean", description: "the caller is not in the synced-users directory", default: "synced" },
    tenant: { type: "string", value: "ID", description: "the caller's tenant_id", default: "none" },
    audit: { type: "boolean", description: "role-check mode audit instead of enforce", default: "enforce" },
    bundle: { type: "string", value: "FILE", description: "the compiled bundle (or a policy folder / git revision)", default: "build/bundle.tar.gz" },
    json: { type: "boolean", description: "print the decision document as JSON", default: "text" },
    opa: OPA_OPTION,
  },
  notes: "exit codes: 0 allow, 1 deny (or an error), 2 usage error",
} as const satisfies CommandSpec;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, SPEC);
  if (positionals.length !== 2) throw usageError(SPEC, `expected METHOD and PATH, got ${positionals.length} argument(s)`);
  const flow = values.flow ?? "accessCode";
  if (flow !== "accessCode" && flow !== "application") throw usageError(SPEC, `--flow must be accessCode or application, got "${flow}"`);
  const req: ExplainRequest = {
    method: positionals[0] as string,
    path: positionals[1] as string,
    flow,
    roles: values.role ?? [],
    synced: !values["not-synced"],
    tenantId: values.tenant,
    mode: values.audit ? "audit" : "enforce",
  };
  const engine = await loadPolicySource(values.bundle ?? join(PROJECT_ROOT, "build", "bundle.tar.gz"), { opa: values.opa });
  const decision = explain(engine, req);
  process.stdout.write(values.json ? JSON.stringify(decision, null, 2) + "\n" : renderExplanation(req, decision));
  return decision.allow ? 0 : 1;
}
