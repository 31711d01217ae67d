/**
 * `portier explain [--role ID]... [--flow accessCode|application] [--not-synced] [--tenant ID] [--audit]
 *  [--bundle FILE | --source REF] [--json] METHOD PATH`, or `portier explain --input FILE`: one decision of
 * the compiled policy, with every check in order and its outcome. A role is named by its id or as the matrix
 * shows it (its label, or an alias); an unknown one is refused with the nearest known name. A stale
 * build/bundle.tar.gz is refused (loadPolicySource). Exit 0: allowed; 1: denied; 2: no answer (usage, a
 * policy_error, broken or stale input).
 */
import { join } from "node:path";
import { readInputFileSync } from "../../files/read-input-file.js";
import type { DecisionInput } from "../../engine/index.js";
import {
  describeCaller,
  explainDecisionInput,
  explainRequest,
  loadPolicySource,
  renderExplanation,
  type ExplainRequest,
} from "../../review/index.js";
import { resolveProject } from "../../toolchain/project.js";
import { indexRoleNames, roleNameKey } from "../../catalog/index.js";
import { OPA_OPTION, PROJECT_OPTION, parse, usageError, type CommandSpec } from "../args.js";
import { EXIT } from "../exit-codes.js";
import { messageOf, unreadable } from "../../errors/caught.js";
import { didYouMean } from "../../text/did-you-mean.js";

export const SPEC = {
  name: "portier explain",
  positionals: "METHOD PATH",
  summary:
    "Explains one decision of the compiled policy for a caller described by the options: the answer, then " +
    "every check\n" +
    "in the policy's order with its own outcome. With --input FILE, a decision input as logged (no METHOD PATH).",
  options: {
    project: PROJECT_OPTION,
    role: {
      type: "string",
      multiple: true,
      value: "ID",
      description: 'a role of the caller: its id, or its name as the matrix shows it ("Élève jeune")',
      default: "none",
    },
    flow: {
      type: "string",
      value: "FLOW",
      description: "the token flow: accessCode (a user) or application",
      default: "accessCode",
    },
    "not-synced": {
      type: "boolean",
      description: "the caller is not in the synced-users directory",
      default: "synced",
    },
    tenant: { type: "string", value: "ID", description: "the caller's tenant_id", default: "none" },
    audit: { type: "boolean", description: "role-check mode audit instead of enforce", default: "enforce" },
    bundle: {
      type: "string",
      value: "FILE",
      description: "the compiled bundle",
      default: "PROJECT/build/bundle.tar.gz",
    },
    source: {
      type: "string",
      value: "REF",
      description: "a bundle, a policy folder or a git revision, built with the pinned opa",
      default: "none",
    },
    input: {
      type: "string",
      value: "FILE",
      description: 'a decision input, or a decision log line holding one in "input"',
      default: "none",
    },
    json: { type: "boolean", description: "print the decision and the checks as JSON", default: "text" },
    opa: OPA_OPTION,
  },
  exits: { ok: "allowed", finding: "denied (policy_error, which is no decision, exits 2)" },
} as const satisfies CommandSpec;

/** The largest --input file: a decision input, or a log line carrying one, is a few KiB. */
const MAX_INPUT_FILE_BYTES = 1024 * 1024;

/** A decision input from a file: the input itself, or a decision log line carrying it as `input`. */
function readInput(file: string): DecisionInput {
  let text: string;
  try {
    text = readInputFileSync(file, MAX_INPUT_FILE_BYTES).toString("utf8");
  } catch (err) {
    throw usageError(SPEC, `--input: ${unreadable(file, err)}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw usageError(SPEC, `--input ${file}: ${messageOf(err)}`);
  }
  const input = doc && typeof doc === "object" && "input" in doc ? doc.input : doc;
  if (!input || typeof input !== "object" || Array.isArray(input))
    throw usageError(SPEC, `--input ${file}: must be a JSON object (a decision input, or a log line with "input")`);
  return input as DecisionInput;
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, SPEC);
  if (values.bundle && values.source) throw usageError(SPEC, "give --bundle or --source, not both");
  if (values.input && positionals.length !== 0)
    throw usageError(SPEC, "--input takes the method and path from the file: give no METHOD PATH");
  if (!values.input && positionals.length !== 2)
    throw usageError(SPEC, `expected METHOD and PATH, got ${positionals.length} argument(s)`);
  const project = resolveProject(values.project).dir;
  const source = values.source ?? values.bundle ?? join(project, "build", "bundle.tar.gz");
  const engine = await loadPolicySource(source, { opa: values.opa, project });

  if (values.input) {
    const input = readInput(values.input);
    const e = explainDecisionInput(engine, input);
    const who =
      `the logged caller (flow ${e.decision.flow ?? "none"}, roles ` +
      `[${(input.roles ?? []).join(", ")}]${input.synced ? "" : ", not synced"})`;
    process.stdout.write(
      values.json
        ? JSON.stringify(e, null, 2) + "\n"
        : renderExplanation({ method: String(input.method), path: String(input.path), who }, e),
    );
    return exitOf(e.decision);
  }

  const flow = values.flow ?? SPEC.options.flow.default;
  if (flow !== "accessCode" && flow !== "application")
    throw usageError(SPEC, `--flow must be accessCode or application, got "${flow}"`);
  const roles = (values.role ?? []).map((name) => roleId(engine.roles, name));
  const req: ExplainRequest = {
    method: positionals[0] as string,
    path: positionals[1] as string,
    flow,
    roles,
    synced: !values["not-synced"],
    tenantId: values.tenant,
    mode: values.audit ? "audit" : "enforce",
  };
  const e = explainRequest(engine, req);
  process.stdout.write(
    values.json
      ? JSON.stringify(e, null, 2) + "\n"
      : renderExplanation({ method: req.method, path: req.path, who: describeCaller(req) }, e),
  );
  return exitOf(e.decision);
}

/** Allowed 0, denied 1; a policy_error is no decision: the policy could not answer (2). */
function exitOf(decision: { allow: boolean; reason: string }): number {
  if (decision.allow) return EXIT.ok;
  return decision.reason === "policy_error" ? EXIT.error : EXIT.finding;
}

/** The id of the role named by its id, label or alias (compared as the service compares role names). */
function roleId(roles: readonly { id: string; label: string; aliases: readonly string[] }[], name: string): string {
  const id = indexRoleNames(roles, "catalog.roles").get(roleNameKey(name));
  if (id !== undefined) return id;
  const names = roles.flatMap((r) => [r.id, r.label]);
  const hint = didYouMean(name, names);
  throw usageError(
    SPEC,
    `--role: unknown role "${name}"${hint || `; the policy knows: ${roles.map((r) => r.id).join(", ")}`}`,
  );
}
