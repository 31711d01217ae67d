/**
 * `portier bundle build [--out build/bundle.tar.gz] [--opa PATH]`: validates data/, checks the policies
 * with `opa check --strict` and compiles them with `opa build -t wasm` for the entrypoints they annotate.
 */
import { dirname, join, resolve } from "node:path";
import { mkdirSync } from "node:fs";
import { buildBundle } from "../../toolchain/build-bundle.js";
import { opaPath } from "../../toolchain/opa.js";
import { PROJECT_ROOT } from "../../toolchain/project-root.js";
import { OPA_OPTION, PROJECT_OPTION, parse, usageError, type CommandSpec } from "../args.js";

export const SPEC = {
  name: "portier bundle",
  positionals: "build",
  summary: "Validates data/, checks the policies with `opa check --strict` and compiles them to a wasm bundle.",
  options: {
    project: PROJECT_OPTION,
    out: { type: "string", value: "FILE", description: "where to write the bundle", default: "PROJECT/build/bundle.tar.gz" },
    opa: OPA_OPTION,
  },
} as const satisfies CommandSpec;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, SPEC);
  if (positionals[0] !== "build" || positionals.length !== 1) throw usageError(SPEC, "expected the sub-command \"build\"");
  const project = resolve(values.project ?? PROJECT_ROOT);
  const out = resolve(values.out ?? join(project, "build", "bundle.tar.gz"));
  mkdirSync(dirname(out), { recursive: true });
  const { revision, entrypoints } = await buildBundle({ opa: opaPath(values.opa), projectDir: project, workDir: join(project, "build"), out });
  console.log(`bundle ok: ${out} (revision ${revision}; entrypoints ${entrypoints.join(", ")})`);
  return 0;
}
