/**
 * `portier review --format sarif`: SARIF 2.1.0 for code scanning, one result per finding. A grant change is
 * located at the line that causes it (data/routes.json, data/roles.json, data/tenants.json or a .rego file,
 * relative to the project folder): gained is a warning, gained by callers outside the role lists an error, lost a
 * note. A recorded call answered differently is located at its line of the decision log; a failing policy test at
 * its rule; a review that could not answer (a side that does not parse or build) is an error at the place named.
 */
import { isAbsolute } from "node:path";
import { pathToFileURL } from "node:url";
import type { ReplayRow, ReviewReport, ReviewRow } from "./review-report.js";
import { describeReplayRow, describeRow } from "./review-report.js";

const RULES = [
  { id: "portier/grant-gained-high-risk", text: "A route opened to callers outside the role lists", level: "error" },
  { id: "portier/grant-gained", text: "A grant gained", level: "warning" },
  { id: "portier/grant-lost", text: "A grant lost", level: "note" },
  {
    id: "portier/call-newly-allowed-high-risk",
    text: "A recorded call of an application or a user without roles newly allowed",
    level: "error",
  },
  { id: "portier/call-newly-allowed", text: "A recorded call newly allowed", level: "warning" },
  { id: "portier/call-newly-denied", text: "A recorded call newly denied", level: "note" },
  { id: "portier/call-reason-changed", text: "A recorded call denied for another reason", level: "note" },
  { id: "portier/policy-test-failed", text: "A policy test failed", level: "error" },
  { id: "portier/policy-coverage", text: "Policy test coverage below the minimum", level: "error" },
  { id: "portier/review-error", text: "The review could not answer", level: "error" },
] as const;
type Rule = (typeof RULES)[number];
const rule = (id: Rule["id"]): Rule => RULES.find((r) => r.id === id) ?? RULES[0];

function ruleOf(row: ReviewRow): Rule {
  if (row.change === "lost") return rule("portier/grant-lost");
  return rule(row.risk === "high" ? "portier/grant-gained-high-risk" : "portier/grant-gained");
}

function replayRule(row: ReplayRow): Rule {
  if (row.change === "newly_denied") return rule("portier/call-newly-denied");
  if (row.change === "reason_changed") return rule("portier/call-reason-changed");
  return rule(row.risk === "high" ? "portier/call-newly-allowed-high-risk" : "portier/call-newly-allowed");
}

/** A file relative to the project (uriBaseId %SRCROOT%), or an absolute one as a file: URI. */
function location(file: string, line: number, column?: number) {
  const artifactLocation = isAbsolute(file)
    ? { uri: pathToFileURL(file).href }
    : { uri: file.split("\\").join("/"), uriBaseId: "%SRCROOT%" };
  const region = { startLine: Math.max(1, line), ...(column ? { startColumn: column } : {}) };
  return [{ physicalLocation: { artifactLocation, region } }];
}

function result(r: Rule, text: string, properties: object, where?: ReturnType<typeof location>) {
  return {
    ruleId: r.id,
    ruleIndex: RULES.indexOf(r),
    level: r.level,
    message: { text },
    ...(where ? { locations: where } : {}),
    properties,
  };
}

function grantResults(report: ReviewReport) {
  return report.rows.flatMap((row) => {
    const r = ruleOf(row);
    const properties = { caller: row.caller, callerKind: row.callerKind, change: row.change, risk: row.risk };
    if (row.causes.length === 0) return [result(r, describeRow(row), properties)];
    return row.causes.map((c) =>
      result(r, `${describeRow(row, c.templates)} (${c.why})`, properties, location(c.file, c.line)),
    );
  });
}

function otherResults(report: ReviewReport) {
  const out = (report.replay?.rows ?? []).map((row) =>
    result(
      replayRule(row),
      describeReplayRow(row),
      { change: row.change, risk: row.risk, count: row.count },
      location(row.log, row.example.line),
    ),
  );
  const t = report.tests;
  for (const f of t?.failed ?? [])
    out.push(
      result(
        rule("portier/policy-test-failed"),
        `policy test ${f.name} failed: ${f.error}`,
        { test: f.name },
        f.file ? location(f.file, f.line) : undefined,
      ),
    );
  if (t && t.failed.length === 0 && (t.coverage === null || t.coverage < t.minCoverage))
    out.push(
      result(
        rule("portier/policy-coverage"),
        t.coverage === null
          ? "policy test coverage not measured"
          : `policy test coverage ${t.coverage.toFixed(2)}% is below ${t.minCoverage}%`,
        { coverage: t.coverage, minCoverage: t.minCoverage },
      ),
    );
  const e = report.error;
  if (e)
    out.push(
      result(
        rule("portier/review-error"),
        e.message,
        {},
        e.location ? location(e.location.file, e.location.line, e.location.column) : undefined,
      ),
    );
  return out;
}

export function renderReviewSarif(report: ReviewReport, version: string): string {
  const sarif = {
    $schema: "https://json.schemastore.org/sarif-2.1.0.json",
    version: "2.1.0",
    runs: [
      {
        tool: {
          driver: {
            name: "portier review",
            version,
            rules: RULES.map((r) => ({
              id: r.id,
              shortDescription: { text: r.text },
              defaultConfiguration: { level: r.level },
            })),
          },
        },
        automationDetails: { id: `portier-review/${report.base.ref}` },
        results: [...grantResults(report), ...otherResults(report)],
      },
    ],
  };
  return JSON.stringify(sarif, null, 2) + "\n";
}
