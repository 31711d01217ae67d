/**
 * `portier matrix [--bundle FILE | --source REF] [--format md|csv|json|html]`: the route x role access
 * matrix computed from the compiled policy.
 */
import { join } from "node:path";
import { computeMatrix, renderMatrix, loadPolicySource, MATRIX_FORMATS } from "../../review/index.js";
import { resolveProject } from "../../toolchain/project.js";
import { OPA_OPTION, PROJECT_OPTION, isOneOf, parse, usageError, type CommandSpec } from "../args.js";

export const SPEC = {
  name: "portier matrix",
  summary:
    "Prints the route x role access matrix computed from the compiled policy (the application flow is a column).",
  options: {
    project: PROJECT_OPTION,
    bundle: {
      type: "string",
      value: "FILE",
      description: "the compiled bundle",
      default: "PROJECT/build/bundle.tar.gz",
    },
    source: {
      type: "string",
      value: "REF",
      description: "instead of --bundle: a bundle, a policy folder or a git revision",
      default: "none",
    },
    format: {
      type: "string",
      value: "FORMAT",
      description: `output format: ${MATRIX_FORMATS.join(", ")}`,
      default: "md",
    },
    opa: OPA_OPTION,
  },
  exits: { ok: "the matrix was printed" },
} as const satisfies CommandSpec;

export async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv, SPEC);
  const format = values.format ?? SPEC.options.format.default;
  if (!isOneOf(MATRIX_FORMATS, format))
    throw usageError(SPEC, `--format must be one of ${MATRIX_FORMATS.join(", ")}, got "${format}"`);
  const project = resolveProject(values.project).dir;
  const source = values.source ?? values.bundle ?? join(project, "build", "bundle.tar.gz");
  const engine = await loadPolicySource(source, { opa: values.opa, project });
  process.stdout.write(renderMatrix(computeMatrix(engine), format));
  return 0;
}
