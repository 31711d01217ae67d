/**
 * `portier bundle build [--out build/bundle.tar.gz] [--opa PATH]`: validates data/, checks the policies
 * with `opa check --strict` and compiles them with `opa build -t wasm` for the entrypoints they annotate.
 */
import { dirname, join, resolve } from "node:path";
import { mkdirSync } from "node:fs";
import { buildBundle } from "../../toolchain/build-bundle.js";
import { opaPath } from "../../toolchain/opa.js";
import { PROJECT_ROOT } from "../../toolchain/project-root.js";
import { parse, UsageError } from "../args.js";

const USAGE = "usage: portier bundle build [--project DIR] [--out FILE] [--opa PATH]";

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { project: { type: "string" }, out: { type: "string" }, opa: { type: "string" } }, USAGE);
  if (positionals[0] !== "build") throw new UsageError(USAGE);
  const project = resolve(values.project ?? PROJECT_ROOT);
  const out = resolve(values.out ?? join(project, "build", "bundle.tar.gz"));
  mkdirSync(dirname(out), { recursive: true });
  const { revision, entrypoints } = await buildBundle({ opa: opaPath(values.opa), projectDir: project, workDir: join(project, "build"), out });
  console.log(`bundle ok: ${out} (revision ${revision}; entrypoints ${entrypoints.join(", ")})`);
  return 0;
}
