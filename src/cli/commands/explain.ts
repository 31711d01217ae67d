/**
 * `portier explain [--role ID]... [--flow accessCode|application] [--not-synced] [--tenant ID] [--audit]
 *  [--bundle FILE] [--json] METHOD PATH`: one decision of the compiled policy, with its reason.
 */
import { join } from "node:path";
import { explain, renderExplanation, loadPolicySource, type ExplainRequest } from "../../review/index.js";
import { PROJECT_ROOT } from "../../toolchain/project-root.js";
import { parse, UsageError } from "../args.js";

const USAGE = "usage: portier explain [--role ID]... [--flow accessCode|application] [--not-synced] [--tenant ID] [--audit] [--bundle FILE] [--json] METHOD PATH";

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(
    argv,
    {
      role: { type: "string", multiple: true },
      flow: { type: "string" },
      "not-synced": { type: "boolean" },
      tenant: { type: "string" },
      audit: { type: "boolean" },
      bundle: { type: "string" },
      json: { type: "boolean" },
      opa: { type: "string" },
    },
    USAGE,
  );
  if (positionals.length !== 2) throw new UsageError(USAGE);
  const flow = values.flow ?? "accessCode";
  if (flow !== "accessCode" && flow !== "application") throw new UsageError(`--flow must be accessCode or application\n${USAGE}`);
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
