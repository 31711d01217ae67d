/**
 * `portier matrix [--bundle FILE | --source REF] [--format md|csv|json|html]`: the route x role access
 * matrix computed from the compiled policy.
 */
import { join } from "node:path";
import { computeMatrix, renderMatrix, loadPolicySource, MATRIX_FORMATS, type MatrixFormat } from "../../review/index.js";
import { PROJECT_ROOT } from "../../toolchain/project-root.js";
import { parse, UsageError } from "../args.js";

const USAGE = "usage: portier matrix [--bundle FILE | --source BUNDLE|FOLDER|GIT-REV] [--format md|csv|json|html]";

export async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv, { bundle: { type: "string" }, source: { type: "string" }, format: { type: "string" }, opa: { type: "string" } }, USAGE);
  const format = (values.format ?? "md") as MatrixFormat;
  if (!MATRIX_FORMATS.includes(format)) throw new UsageError(`--format must be one of ${MATRIX_FORMATS.join(", ")}\n${USAGE}`);
  const source = values.source ?? values.bundle ?? join(PROJECT_ROOT, "build", "bundle.tar.gz");
  const engine = await loadPolicySource(source, { opa: values.opa });
  process.stdout.write(renderMatrix(computeMatrix(engine), format));
  return 0;
}
