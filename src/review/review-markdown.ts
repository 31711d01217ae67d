/**
 * `portier review --format md`: the report as a pull-request comment. The first line a reviewer acts on, the
 * policy tests, one table row per caller kind and change (API names, routes folded, the line that causes it,
 * high risk first), the recorded calls that would change, and whether --fail-on fails.
 */
import type { Outcome, ReplayRow, ReviewReport, ReviewRow } from "./review-report.js";

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

function risk(r: { risk: string; failing: boolean }): string {
  return `${r.risk === "high" ? "**high**" : "normal"}${r.failing ? " (fails)" : ""}`;
}

function replayTable(rows: ReplayRow[]): string[] {
  const out = [
    "| Risk | Change | Calls | Route | Flow | Roles | Before | After | Example |",
    "|---|---|---|---|---|---|---|---|---|",
  ];
  for (const r of rows) {
    const example = `${r.log}:${r.example.line} ${r.example.method} ${r.example.path}`;
    out.push(
      `| ${risk(r)} | ${r.change.replace("_", " ")} | ${r.count} | ${code(r.route ?? "(none)")} | ` +
        `${r.flow ?? "none"} | ` +
        `${cell(r.roles.join(", ") || "none")} | ${outcome(r.before)} | ${outcome(r.after)} | ${code(example)} |`,
    );
  }
  return out;
}

function testsLine(report: ReviewReport): string {
  const t = report.tests;
  if (!t) return `Policy tests: not run (HEAD \`${report.head.ref}\` is a bundle, not sources).`;
  const coverage = t.coverage === null ? "coverage not measured (a test failed)" : `coverage ${t.coverage.toFixed(2)}%`;
  const failed = t.failed.map(
    (f) => `- failed: ${code(f.name)} at ${code(f.location)}${f.error ? `: ${cell(f.error)}` : ""}`,
  );
  return [
    `Policy tests on \`${report.head.ref}\`: ${t.passed} passed, ${t.failed.length} failed; ${coverage}.`,
    ...failed,
  ].join("\n");
}

export function renderReviewMarkdown(report: ReviewReport): string {
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
      "| Risk | Change | Caller | Request | API | Routes | Before | After | Line |",
      "|---|---|---|---|---|---|---|---|---|",
    );
    for (const r of report.rows)
      out.push(
        `| ${risk(r)} | ${r.change} | ${caller(r)} | ${cell(r.request)} | ${apis(r)} | ${routes(r)} | ` +
          `${outcome(r.before)} | ${outcome(r.after)} | ${lines(r)} |`,
      );
    out.push("");
  }
  if (report.replay) {
    const logs = report.replay.logs.map((l) => `${code(l.file)} (${l.replayed} replayed)`).join(", ");
    out.push(`Recorded decisions replayed under \`${report.head.ref}\`: ${logs}.`, "");
    if (report.replay.rows.length > 0) out.push(...replayTable(report.replay.rows), "");
  }
  const verdict = report.failing ? `**fails**: ${cell(report.findings.join("; "))}` : "passes";
  out.push(
    `Result with \`--fail-on ${report.failOn}\`: ${verdict}. High risk: a route opened to callers ` +
      "outside the role lists (users not synced, synced users without a listed role, applications, another tenant, " +
      "other token shapes).",
  );
  return out.join("\n") + "\n";
}
