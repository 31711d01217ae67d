/**
 * `portier explain [--role ID]... [--flow accessCode|application] [--not-synced] [--tenant ID] [--audit]
 *  [--bundle FILE | --source REF] [--json] METHOD PATH`, or `portier explain --input FILE`: one decision of
 * the compiled policy, with every check in order and its outcome. Unknown roles are refused; a bundle older
 * than policies/ or data/ is reported. Exit 0: allowed; 1: denied; 2: usage error.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { DecisionInput } from "../../engine/index.js";
import { describeCaller, explainDecisionInput, explainRequest, loadPolicySource, newerSource, readCatalog, renderExplanation, type ExplainRequest } from "../../review/index.js";
import { PROJECT_ROOT } from "../../toolchain/project-root.js";
import { parse, UsageError } from "../args.js";

const USAGE =
  "usage: portier explain [--role ID]... [--flow accessCode|application] [--not-synced] [--tenant ID] [--audit] [--bundle FILE | --source BUNDLE|FOLDER|GIT-REV] [--json] METHOD PATH\n" +
  "       portier explain --input FILE [--bundle FILE | --source REF] [--json]   (a decision input, or a decision log line holding one in \"input\")";

/** A decision input from a file: the input itself, or a decision log line carrying it as `input`. */
function readInput(file: string): DecisionInput {
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new UsageError(`--input ${file}: ${(err as Error).message}`);
  }
  const input = doc && typeof doc === "object" && "input" in doc ? (doc as { input: unknown }).input : doc;
  if (!input || typeof input !== "object" || Array.isArray(input)) throw new UsageError(`--input ${file}: must be a JSON object (a decision input, or a log line with "input")`);
  return input as DecisionInput;
}

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
      source: { type: "string" },
      input: { type: "string" },
      json: { type: "boolean" },
      opa: { type: "string" },
    },
    USAGE,
  );
  if (values.bundle && values.source) throw new UsageError(`give --bundle or --source, not both\n${USAGE}`);
  if (values.input ? positionals.length !== 0 : positionals.length !== 2) throw new UsageError(USAGE);
  const defaultBundle = join(PROJECT_ROOT, "build", "bundle.tar.gz");
  const source = values.source ?? values.bundle ?? defaultBundle;
  const engine = await loadPolicySource(source, { opa: values.opa });
  if (source === defaultBundle) {
    const newer = newerSource(defaultBundle, PROJECT_ROOT);
    if (newer) console.error(`portier explain: warning: ${newer} changed after build/bundle.tar.gz was built; run make build, or pass --source . to explain the sources`);
  }

  if (values.input) {
    const input = readInput(values.input);
    const e = explainDecisionInput(engine, input);
    const who = `the logged caller (flow ${e.decision.flow ?? "none"}, roles [${(input.roles ?? []).join(", ")}]${input.synced ? "" : ", not synced"})`;
    process.stdout.write(values.json ? JSON.stringify(e, null, 2) + "\n" : renderExplanation({ method: String(input.method), path: String(input.path), who }, e));
    return e.decision.allow ? 0 : 1;
  }

  const flow = values.flow ?? "accessCode";
  if (flow !== "accessCode" && flow !== "application") throw new UsageError(`--flow must be accessCode or application\n${USAGE}`);
  const known = readCatalog(engine).roles.map((r) => r.id);
  const unknown = (values.role ?? []).filter((r) => !known.includes(r));
  if (unknown.length > 0) throw new UsageError(`unknown role(s) ${unknown.join(", ")}; the policy knows: ${known.join(", ")}`);
  const req: ExplainRequest = {
    method: positionals[0] as string,
    path: positionals[1] as string,
    flow,
    roles: values.role ?? [],
    synced: !values["not-synced"],
    tenantId: values.tenant,
    mode: values.audit ? "audit" : "enforce",
  };
  const e = explainRequest(engine, req);
  process.stdout.write(values.json ? JSON.stringify(e, null, 2) + "\n" : renderExplanation({ method: req.method, path: req.path, who: describeCaller(req) }, e));
  return e.decision.allow ? 0 : 1;
}
