/**
 * `portier review --format md`: the report as a pull-request comment. The first line a reviewer acts on, the
 * policy tests, one table row per caller kind and change (API names, routes folded, the people it reaches, the
 * line that causes it, high risk first), the recorded calls that would change and whose, and whether --fail-on fails.
 */
import type { Outcome, ReplayRow, ReviewReport, ReviewRow } from "./review-report.js";
import { peopleText, type PeopleList } from "./review-people.js";
import { routeText } from "./replay.js";

function cell(s: string): string {
  return s.replace(/\\/g, "\\\\").replace(/\|/g, "\\|").replace(/\n/g, " ");
}

function code(s: string): string {
  return `\`${cell(s).replace(/`/g, "'")}\``;
}

function outcome(o: Outcome): string {
  if (!o) return "no such route";
  return o.allow ? "allow" : `deny (${o.reason})`;
}

const SHOWN_ROUTES = 3;
// A pull-request comment has a size limit (GitHub: 65,536 characters); the JSON, SARIF and JUnit list everything.
const SHOWN_FAILED_TESTS = 10;
const SHOWN_ROWS = 60;

function routes(row: ReviewRow): string {
  const shown = row.routes.slice(0, SHOWN_ROUTES).map((r) => code(r.template));
  const more = row.routes.length - shown.length;
  return more > 0 ? `${shown.join(", ")} and ${more} more` : shown.join(", ");
}

function apis(row: ReviewRow): string {
  const names = [...new Set(row.routes.map((r) => (r.product ? `${r.product}: ${r.api}` : r.api)).filter(Boolean))];
  return cell(names.length > 3 ? `${names.slice(0, 3).join(", ")} and ${names.length - 3} more` : names.join(", "));
}

function lines(row: ReviewRow): string {
  return row.causes.map((c) => code(`${c.file}:${c.line}`)).join(", ") || "-";
}

function caller(row: ReviewRow): string {
  return cell(row.role ? `${row.caller} (${row.role})` : row.caller);
}

/** The people a row reaches: the directory's, then the logs' callers, each list bounded. */
function people(row: ReviewRow): string {
  const p = row.people;
  if (!p) return "-";
  const part = (what: string, l: PeopleList | undefined) =>
    l === undefined ? [] : [`${what}: ${l.count === 0 ? "none" : `${l.count} (${peopleText(l)})`}`];
  return cell([...part("directory", p.directory), ...part("log", p.seen)].join("; ") || "-");
}

function risk(r: { risk: string; failing: boolean }): string {
  return `${r.risk === "high" ? "**high**" : "normal"}${r.failing ? " (fails)" : ""}`;
}

function replayTable(rows: ReplayRow[]): string[] {
  const out = [
    "| Risk | Change | Calls | Route | Flow | Roles | Before | After | Who | Example |",
    "|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const r of rows.slice(0, SHOWN_ROWS)) {
    const example = `${r.log}:${r.example.line} ${r.example.method} ${r.example.path}`;
    out.push(
      `| ${risk(r)} | ${r.change.replace("_", " ")} | ${r.count} | ${code(routeText(r, "(none)"))} | ` +
        `${r.flow ?? "none"} | ` +
        `${cell(r.roles.join(", ") || "none")} | ${outcome(r.before)} | ${outcome(r.after)} | ` +
        `${cell(peopleText(r.subjects))} | ${code(example)} |`,
    );
  }
  out.push(...more(rows.length, "group of recorded calls", "groups of recorded calls"));
  return out;
}

/** The line after a table cut at SHOWN_ROWS. */
function more(count: number, one: string, many = `${one}s`): string[] {
  const left = count - SHOWN_ROWS;
  return left > 0
    ? ["", `... and ${left} more ${left === 1 ? one : many}: the json, sarif and junit formats list all.`]
    : [];
}

function testsLine(report: ReviewReport): string {
  const t = report.tests;
  if (!t) return `Policy tests: not run (HEAD \`${report.head.ref}\` is a bundle, not sources).`;
  const coverage = t.coverage === null ? "coverage not measured (a test failed)" : `coverage ${t.coverage.toFixed(2)}%`;
  const failed = t.failed
    .slice(0, SHOWN_FAILED_TESTS)
    .map((f) => `- failed: ${code(f.name)} at ${code(f.location)}${f.error ? `: ${cell(f.error)}` : ""}`);
  const more = t.failed.length - failed.length;
  return [
    `Policy tests on \`${report.head.ref}\`: ${t.passed} passed, ${t.failed.length} failed; ${coverage}.`,
    ...failed,
    ...(more > 0 ? [`- and ${more} more (\`portier test\` lists them all)`] : []),
  ].join("\n");
}

export function renderReviewMarkdown(report: ReviewReport): string {
  if (report.error) return errorMarkdown(report, report.error);
  const out = [
    `### Portier review: \`${report.base.ref}\` -> \`${report.head.ref}\``,
    "",
    `**${cell(report.summary)}**`,
    "",
    testsLine(report),
    "",
  ];
  for (const t of report.routesAdded) out.push(`- route added: ${code(t)}`);
  for (const t of report.routesRemoved) out.push(`- route removed: ${code(t)}`);
  if (report.routesAdded.length + report.routesRemoved.length > 0) out.push("");
  if (report.rows.length > 0) {
    out.push(
      "| Risk | Change | Caller | Request | API | Routes | Before | After | People | Line |",
      "|---|---|---|---|---|---|---|---|---|---|",
    );
    for (const r of report.rows.slice(0, SHOWN_ROWS))
      out.push(
        `| ${risk(r)} | ${r.change} | ${caller(r)} | ${cell(r.request)} | ${apis(r)} | ${routes(r)} | ` +
          `${outcome(r.before)} | ${outcome(r.after)} | ${people(r)} | ${lines(r)} |`,
      );
    out.push(...more(report.rows.length, "change"), "");
  }
  if (report.replay) {
    const logs = report.replay.logs.map((l) => `${code(l.file)} (${l.replayed} replayed)`).join(", ");
    out.push(`Recorded decisions replayed under \`${report.head.ref}\`: ${logs}.`, "");
    if (report.replay.rows.length > 0) out.push(...replayTable(report.replay.rows), "");
  }
  const verdict = report.failing ? `**fails**: ${cell(report.findings.join("; "))}` : "passes";
  const risky = report.rows.some((r) => r.risk === "high") || report.replay?.rows.some((r) => r.risk === "high");
  out.push(
    `Result with \`--fail-on ${report.failOn}\`: ${verdict}.` +
      // The sentence explains the high-risk rows above; without one it would read as a finding.
      (risky
        ? " High risk: a route opened to callers outside the role lists (users not synced, synced users without a " +
          "listed role, applications, another tenant, other token shapes)."
        : ""),
  );
  return out.join("\n") + "\n";
}

/** The report of a review that could not answer: the error, at its place, and what exits 2 means. */
function errorMarkdown(report: ReviewReport, e: NonNullable<ReviewReport["error"]>): string {
  const l = e.location;
  const place = l ? ` at ${code(`${l.file}:${l.line}${l.column ? `:${l.column}` : ""}`)}` : "";
  return [
    `### Portier review: \`${report.base.ref}\` -> \`${report.head.ref}\``,
    "",
    `**The review could not answer${place}.**`,
    "",
    "~~~text",
    e.message,
    "~~~",
    "",
    "Fix the change (it must parse, build and run its policy tests) and push again: no grant was compared.",
    "",
  ].join("\n");
}
