/**
 * Runs `opa test` on the project's policies and tests (project.ts) with the bundle's data document, twice:
 * once for per-test results (`--format json`: one entry per test, data-driven tests with one sub-result per
 * case, printed output base64-encoded), once for coverage (`--coverage --format json`, whose `coverage` figure
 * is reported as is).
 */
import { isAbsolute, relative, resolve } from "node:path";
import { runOpa } from "./opa.js";
import { projectAt } from "./project.js";

export interface PolicyTestCase {
  /** `data.<package>.<rule>`, followed by `[key]` per level for a case of a data-driven test. */
  name: string;
  /** The test rule the case belongs to (`name` without the keys). */
  test: string;
  package: string;
  /** file:line of the test rule (relative to the working directory when inside it). */
  location: string;
  /** The test rule's file (absolute) and 1-based line, as data; "" and 0 when opa gave none. */
  file: string;
  line: number;
  status: "pass" | "fail" | "skip";
  /** Nanoseconds opa measured for the test rule (all cases of a data-driven test together). */
  durationNs: number;
  /** What the test rule printed, decoded; one text for all cases of a data-driven test. */
  output: string;
  /** An evaluation error opa reported for the test rule, or "". */
  error: string;
}

export interface PolicyTestReport {
  cases: PolicyTestCase[];
  passed: number;
  failed: PolicyTestCase[];
  skipped: number;
  /** OPA's own coverage figure (percent of the loaded files' lines, tests included); null when tests failed. */
  coverage: number | null;
  /** file:line of each line opa reports not covered. */
  uncovered: string[];
}

interface OpaSubResult {
  name?: string;
  fail?: boolean;
  skip?: boolean;
  sub_results?: Record<string, OpaSubResult>;
}

interface OpaTestResult extends OpaSubResult {
  location?: { file: string; row: number };
  package?: string;
  name: string;
  error?: unknown;
  output?: string;
  duration?: number;
}

interface OpaCoverage {
  coverage?: number;
  files?: Record<string, { not_covered?: { start: { row: number }; end: { row: number } }[] }>;
}

/** A file as reports show it: relative to the working directory when inside it, else absolute. */
function shown(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel.startsWith("..") || isAbsolute(rel) ? resolve(file) : rel;
}

/** opa's `output` is Go's []byte, which encoding/json writes as base64. */
function decodeOutput(output: string | undefined): string {
  return output ? Buffer.from(output, "base64").toString("utf8") : "";
}

function describeError(error: unknown): string {
  if (!error) return "";
  const e = error as { code?: string; message?: string; location?: { file?: string; row?: number } };
  if (typeof e.message !== "string") return JSON.stringify(error);
  const at = e.location?.file ? `${shown(e.location.file)}:${e.location.row ?? "?"}: ` : "";
  return `${at}${e.code ? `${e.code}: ` : ""}${e.message}`;
}

function status(r: OpaSubResult): PolicyTestCase["status"] {
  return r.skip ? "skip" : r.fail ? "fail" : "pass";
}

/** One case per test rule, or per leaf of a data-driven test's sub-results. */
function flatten(r: OpaTestResult): PolicyTestCase[] {
  const test = `${r.package ?? "data"}.${r.name}`;
  const base = {
    test,
    package: r.package ?? "data",
    location: r.location ? `${shown(r.location.file)}:${r.location.row}` : "?",
    file: r.location ? resolve(r.location.file) : "",
    line: r.location?.row ?? 0,
    durationNs: r.duration ?? 0,
    output: decodeOutput(r.output),
    error: describeError(r.error),
  };
  const cases: PolicyTestCase[] = [];
  const walk = (name: string, node: OpaSubResult): void => {
    const subs = Object.entries(node.sub_results ?? {});
    if (subs.length === 0) {
      cases.push({ ...base, name, status: status(node) });
      return;
    }
    for (const [key, sub] of subs) walk(`${name}[${key}]`, sub);
  };
  walk(test, r);
  return cases;
}

// opa's default is 5 s per test. The data-driven tests run under opa's test tracer, and the every-route x
// every-role table takes a few seconds of wall time on a busy machine; a test still cannot run unbounded.
const PER_TEST_TIMEOUT = "60s";

export async function runPolicyTests(opts: {
  opa: string;
  projectDir: string;
  dataDir: string;
}): Promise<PolicyTestReport> {
  // The project's tests with the policies they test (project.ts: the spec's oracle runs with the spec's data only).
  const policies = projectAt(opts.projectDir).testRoots;
  const results = await runOpa(opts.opa, [
    "test",
    "--timeout",
    PER_TEST_TIMEOUT,
    "--format",
    "json",
    ...policies,
    opts.dataDir,
  ]);
  let parsed: OpaTestResult[];
  try {
    parsed = JSON.parse(results.stdout) as OpaTestResult[];
    if (!Array.isArray(parsed)) throw new Error("not a list");
  } catch {
    throw new Error(
      `opa test did not run (exit ${results.code}):\n${(results.stderr || results.stdout).trim() || "(no output)"}`,
    );
  }
  // opa runs tests in parallel: order them by file and line so that reports are stable.
  const byPlace = (r: OpaTestResult): [string, number] => [r.location?.file ?? "", r.location?.row ?? 0];
  parsed.sort((a, b) => byPlace(a)[0].localeCompare(byPlace(b)[0]) || byPlace(a)[1] - byPlace(b)[1]);
  const cases = parsed.flatMap(flatten);
  const failed = cases.filter((c) => c.status === "fail");
  const passed = cases.filter((c) => c.status === "pass").length;
  const skipped = cases.filter((c) => c.status === "skip").length;

  // opa writes no coverage report when a test fails.
  if (failed.length > 0) return { cases, passed, failed, skipped, coverage: null, uncovered: [] };

  const cov = await runOpa(opts.opa, [
    "test",
    "--timeout",
    PER_TEST_TIMEOUT,
    "--coverage",
    "--format",
    "json",
    ...policies,
    opts.dataDir,
  ]);
  // With failing tests, opa prints their names as text before the coverage JSON: parse from the JSON.
  const jsonStart = cov.stdout.search(/^\{/m);
  let report: OpaCoverage;
  try {
    report = JSON.parse(jsonStart === -1 ? cov.stdout : cov.stdout.slice(jsonStart)) as OpaCoverage;
  } catch {
    throw new Error(`opa test --coverage gave no report:\n${(cov.stderr || cov.stdout).trim()}`);
  }
  if (typeof report.coverage !== "number") throw new Error(`opa test --coverage gave no "coverage" figure`);
  const uncovered: string[] = [];
  for (const [file, f] of Object.entries(report.files ?? {})) {
    for (const range of f.not_covered ?? []) {
      for (let row = range.start.row; row <= range.end.row; row++) uncovered.push(`${shown(file)}:${row}`);
    }
  }
  return { cases, passed, failed, skipped, coverage: report.coverage, uncovered };
}
