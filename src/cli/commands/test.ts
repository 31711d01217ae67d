/**
 * `portier test [--opa PATH] [--min-coverage 100] [-v] [--format text|junit] [--output FILE]`: runs the
 * policy tests with opa. Text: one line per failing test or data-driven case (file:line) with what the test
 * printed, every test with -v, OPA's coverage figure, and `policy: N passed, N failed`. JUnit XML goes to
 * --output, or to stdout with the text moved to stderr. Exit 1 on a failed test or coverage below the minimum,
 * 2 when the tests could not run (broken data/, a policy opa cannot compile, no opa).
 */
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { writeBundleData } from "../../toolchain/build-bundle.js";
import { opaPath } from "../../toolchain/opa.js";
import { renderJunit } from "../../toolchain/policy-test-junit.js";
import { runPolicyTests, type PolicyTestCase, type PolicyTestReport } from "../../toolchain/run-policy-tests.js";
import { resolveProject } from "../../toolchain/project.js";
import { OPA_OPTION, PROJECT_OPTION, minCoverageOption, parse, usageError, type CommandSpec } from "../args.js";
import { messageOf } from "../../errors/caught.js";
import { EXIT } from "../exit-codes.js";

export const SPEC = {
  name: "portier test",
  summary:
    "Runs the policy tests with opa: one line per failing test or table case (file:line) with what it printed, " +
    "OPA's\ncoverage, N passed, N failed; JUnit XML for CI dashboards with --format junit.",
  options: {
    project: PROJECT_OPTION,
    opa: OPA_OPTION,
    "min-coverage": {
      type: "string",
      value: "PERCENT",
      description: "fail below this coverage (a number from 0 to 100)",
      default: "100",
    },
    verbose: {
      type: "boolean",
      short: "v",
      description: "list every test and case, passed ones too",
      default: "failures only",
    },
    format: {
      type: "string",
      value: "FORMAT",
      description: "text, or junit (JUnit XML on stdout, the text on stderr)",
      default: "text",
    },
    output: {
      type: "string",
      value: "FILE",
      description: "with --format junit: write the XML to FILE (the text stays on stdout)",
      default: "stdout",
    },
  },
  exits: {
    ok: "every test passed with enough coverage",
    finding: "a test failed, or coverage is below --min-coverage",
  },
} as const satisfies CommandSpec;

function indent(text: string): string[] {
  return text
    .replace(/\n$/, "")
    .split("\n")
    .map((l) => `    ${l}`);
}

/** The text report: failing cases (all cases with verbose), each test's printed output once after its cases. */
function textLines(cases: PolicyTestCase[], verbose: boolean): string[] {
  const lines: string[] = [];
  const shown = cases.filter((c) => verbose || c.status === "fail");
  shown.forEach((c, i) => {
    lines.push(`${c.status.toUpperCase()} ${c.location} ${c.name}${c.error ? `: ${c.error}` : ""}`);
    const lastOfTest = shown[i + 1]?.test !== c.test;
    if (lastOfTest && c.output && (verbose || c.status === "fail")) lines.push(...indent(c.output));
  });
  return lines;
}

export async function run(argv: string[]): Promise<number> {
  const { values } = parse(argv, SPEC);
  const min = minCoverageOption(SPEC, values["min-coverage"]);
  const format = values.format ?? SPEC.options.format.default;
  if (format !== "text" && format !== "junit") throw usageError(SPEC, `--format: "${format}" is not text or junit`);
  if (values.output !== undefined && format !== "junit") throw usageError(SPEC, "--output: only with --format junit");
  const project = resolveProject(values.project).dir;
  const data = writeBundleData(project, join(project, "build", "bundle-data"));
  // With JUnit on stdout, the human-readable report goes to stderr so the XML stays clean.
  const say =
    format === "junit" && values.output === undefined ? (l: string) => console.error(l) : (l: string) => console.log(l);
  let report: PolicyTestReport;
  try {
    report = await runPolicyTests({ opa: opaPath(values.opa), projectDir: project, dataDir: data.dir });
  } catch (err) {
    // Still close with the policy line, so that a log read from its end never misses that nothing ran.
    console.error(`portier: ${messageOf(err)}`);
    say("policy: not run (see the error above)");
    return EXIT.error;
  }
  for (const line of textLines(report.cases, values.verbose === true)) say(line);
  for (const line of report.uncovered) say(`not covered: ${line}`);
  say(
    report.coverage === null
      ? "coverage: not measured (opa reports coverage only when every test passes)"
      : `coverage: ${report.coverage.toFixed(2)}% (opa)`,
  );
  const belowMin = report.coverage !== null && report.coverage < min;
  if (belowMin) say(`coverage ${report.coverage!.toFixed(2)}% is below the required ${min}%`);
  const skipped = report.skipped ? `, ${report.skipped} skipped` : "";
  say(`policy: ${report.passed} passed, ${report.failed.length} failed${skipped}`);

  if (format === "junit") {
    const xml = renderJunit(report, min);
    if (values.output === undefined) process.stdout.write(xml);
    else writeFileSync(resolve(values.output), xml);
  }
  return report.failed.length > 0 || report.coverage === null || belowMin ? EXIT.finding : EXIT.ok;
}
