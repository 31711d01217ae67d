/**
 * `portier test [--opa PATH] [--min-coverage 100]`: runs the policy tests with opa and prints one line per
 * failing test (file:line), a line `coverage: X%`, and `N passed, N failed`. Non-zero exit on a failure
 * or coverage below the minimum.
 */
import { join, resolve } from "node:path";
import { writeBundleData } from "../../toolchain/build-bundle.js";
import { opaPath } from "../../toolchain/opa.js";
import { runPolicyTests } from "../../toolchain/run-policy-tests.js";
import { PROJECT_ROOT } from "../../toolchain/project-root.js";
import { OPA_OPTION, PROJECT_OPTION, parse, type CommandSpec } from "../args.js";

export const SPEC = {
  name: "portier test",
  summary: "Runs the policy tests with opa: one line per failing test (file:line), the coverage, N passed, N failed.",
  options: {
    project: PROJECT_OPTION,
    opa: OPA_OPTION,
    "min-coverage": { type: "string", value: "PERCENT", description: "fail below this coverage", default: "100" },
  },
  notes: "exit codes: 0 all passed with enough coverage, 1 otherwise, 2 usage error",
} as const satisfies CommandSpec;

export async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv, SPEC);
  const project = resolve(values.project ?? PROJECT_ROOT);
  const min = Number(values["min-coverage"] ?? "100");
  const data = writeBundleData(project, join(project, "build", "bundle-data"));
  const report = await runPolicyTests({ opa: opaPath(values.opa), projectDir: project, dataDir: data.dir });
  for (const f of report.failed) console.log(`FAIL ${f.location} ${f.name}${f.output ? `: ${f.output}` : ""}`);
  for (const line of report.uncovered) console.log(`not covered: ${line}`);
  console.log(report.coverage === null ? "coverage: not measured (opa reports coverage only when every test passes)" : `coverage: ${report.coverage.toFixed(2)}%`);
  console.log(`policy: ${report.passed} passed, ${report.failed.length} failed`);
  if (report.failed.length > 0 || report.coverage === null) return 1;
  if (report.coverage < min) {
    console.log(`coverage ${report.coverage.toFixed(2)}% is below the required ${min}%`);
    return 1;
  }
  return 0;
}
