/**
 * Runs `opa test` on policies/ with the bundle's data document, twice: once for per-test results
 * (file:line of each failure), once for line coverage of the policy files (test files excluded).
 */
import { join, relative } from "node:path";
import { runOpa } from "./opa.js";

export interface PolicyTestReport {
  passed: number;
  failed: { name: string; location: string; output: string }[];
  /** Percent of policy (non-test) lines covered; null when tests failed (opa then reports none). */
  coverage: number | null;
  uncovered: string[];
}

interface OpaTestResult {
  location?: { file: string; row: number };
  package?: string;
  name: string;
  fail?: boolean;
  error?: { message?: string } | unknown;
  output?: string;
  skip?: boolean;
}

interface OpaCoverage {
  files?: Record<string, { covered?: { start: { row: number } }[]; not_covered?: { start: { row: number }; end: { row: number } }[] }>;
}

export async function runPolicyTests(opts: { opa: string; projectDir: string; dataDir: string }): Promise<PolicyTestReport> {
  const policies = join(opts.projectDir, "policies");
  const results = await runOpa(opts.opa, ["test", "--format", "json", policies, opts.dataDir]);
  let parsed: OpaTestResult[];
  try {
    parsed = JSON.parse(results.stdout) as OpaTestResult[];
  } catch {
    throw new Error(`opa test did not run:\n${(results.stderr || results.stdout).trim()}`);
  }
  const failed = parsed
    .filter((r) => r.fail || r.error)
    .map((r) => ({
      name: `${r.package ?? ""}.${r.name}`,
      location: r.location ? `${relative(process.cwd(), r.location.file)}:${r.location.row}` : "?",
      output: [r.output ?? "", r.error ? JSON.stringify(r.error) : ""].join(" ").trim(),
    }));

  // opa writes no coverage report when a test fails.
  if (failed.length > 0) return { passed: parsed.length - failed.length, failed, coverage: null, uncovered: [] };

  const cov = await runOpa(opts.opa, ["test", "--coverage", "--format", "json", policies, opts.dataDir]);
  // With failing tests, opa prints their names as text before the coverage JSON: parse from the JSON.
  const jsonStart = cov.stdout.search(/^\{/m);
  let report: OpaCoverage;
  try {
    report = JSON.parse(jsonStart === -1 ? cov.stdout : cov.stdout.slice(jsonStart)) as OpaCoverage;
  } catch {
    throw new Error(`opa test --coverage gave no report:\n${(cov.stderr || cov.stdout).trim()}`);
  }
  let covered = 0;
  let total = 0;
  const uncovered: string[] = [];
  for (const [file, f] of Object.entries(report.files ?? {})) {
    if (file.endsWith("_test.rego")) continue;
    const notCovered = new Set<number>();
    for (const range of f.not_covered ?? []) for (let row = range.start.row; row <= range.end.row; row++) notCovered.add(row);
    const coveredRows = new Set((f.covered ?? []).map((c) => c.start.row));
    for (const row of notCovered) coveredRows.delete(row);
    covered += coveredRows.size;
    total += coveredRows.size + notCovered.size;
    for (const row of [...notCovered].sort((a, b) => a - b)) uncovered.push(`${relative(process.cwd(), file)}:${row}`);
  }
  return { passed: parsed.length - failed.length, failed, coverage: total === 0 ? 0 : (100 * covered) / total, uncovered };
}
