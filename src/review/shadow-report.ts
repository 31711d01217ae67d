/**
 * Shadow differences read back from a decision log: `portier serve --shadow-bundle` writes, on the line of each
 * decision where the candidate policy answered otherwise, `shadow` (the candidate's allow, reason and revision).
 * This groups those lines as the impact replay groups its changes (by route, flow, roles and both outcomes,
 * newly allowed first), without evaluating anything: the candidate already did, on live traffic. Decisions where
 * the candidate agreed, or that were not sampled, carry no `shadow` and are only counted.
 */
import { boundedLines, LineTooLong } from "./bounded-lines.js";
import {
  addChange,
  changeLine,
  changeOf,
  changeTable,
  countUnreadable,
  decisionEntries,
  isInput,
  MAX_LOG_LINE_BYTES,
  sortedChanges,
  type Outcome,
  type ReplayChange,
} from "./replay.js";

export interface ShadowReport {
  /** Lines read. */
  lines: number;
  /** Decision lines, and those with a policy input (the only ones a candidate evaluates). */
  decisions: number;
  policyDecisions: number;
  /** Decision lines carrying `shadow`. */
  differing: number;
  newlyAllowed: number;
  newlyDenied: number;
  reasonChanged: number;
  changes: ReplayChange[];
  /** Lines that are not JSON (the first few kept), and `shadow` fields that are not {allow, reason, revision}. */
  malformed: { line: number; error: string }[];
  malformedCount: number;
  /** Candidate revisions named by the `shadow` fields, and the revisions that decided. */
  candidateRevisions: string[];
  loggedRevisions: string[];
}

function shadowOutcome(v: unknown): (Outcome & { revision: string }) | undefined {
  const s = v as { allow?: unknown; reason?: unknown; revision?: unknown } | null;
  if (!s || typeof s !== "object" || typeof s.allow !== "boolean" || typeof s.reason !== "string") return undefined;
  return { allow: s.allow, reason: s.reason, revision: typeof s.revision === "string" ? s.revision : "unknown" };
}

/** Groups the shadow differences of log lines (strings, one JSON object each). */
export async function shadowLines(
  lines: AsyncIterable<string | LineTooLong> | Iterable<string | LineTooLong>,
): Promise<ShadowReport> {
  const report: ShadowReport = {
    lines: 0,
    decisions: 0,
    policyDecisions: 0,
    differing: 0,
    newlyAllowed: 0,
    newlyDenied: 0,
    reasonChanged: 0,
    changes: [],
    malformed: [],
    malformedCount: 0,
    candidateRevisions: [],
    loggedRevisions: [],
  };
  const groups = new Map<string, ReplayChange>();
  const candidates = new Set<string>();
  const revisions = new Set<string>();
  const bad = (line: number, error: string) => countUnreadable(report, line, error);
  for await (const { line, entry } of decisionEntries(lines, report)) {
    report.decisions++;
    if (typeof entry.revision === "string") revisions.add(entry.revision);
    if (!isInput(entry.input)) continue;
    report.policyDecisions++;
    if (entry.shadow === undefined || entry.shadow === null) continue;
    const after = shadowOutcome(entry.shadow);
    if (after === undefined) {
      bad(line, "shadow is not {allow, reason, revision}");
      continue;
    }
    const before: Outcome = {
      allow: entry.allow === true,
      reason: typeof entry.reason === "string" ? entry.reason : "",
    };
    const change = changeOf(before, { allow: after.allow, reason: after.reason });
    // The service writes `shadow` only on a difference; a line that says otherwise is counted, not grouped.
    if (change === undefined) {
      bad(line, "shadow equals the decision (not a difference)");
      continue;
    }
    candidates.add(after.revision);
    report.differing++;
    if (change === "newly_allowed") report.newlyAllowed++;
    else if (change === "newly_denied") report.newlyDenied++;
    else report.reasonChanged++;
    const route = typeof entry.route === "string" ? entry.route : null;
    const flow = typeof entry.flow === "string" ? entry.flow : null;
    addChange(
      groups,
      {
        change,
        route,
        roles: entry.input.roles ?? [],
        flow,
        before,
        after: { allow: after.allow, reason: after.reason },
      },
      line,
      entry.input,
    );
  }
  report.changes = sortedChanges(groups);
  report.candidateRevisions = [...candidates];
  report.loggedRevisions = [...revisions];
  return report;
}

/** Reads a decision log file line by line (never whole; a line over MAX_LOG_LINE_BYTES is not kept). */
export function shadowLogFile(file: string): Promise<ShadowReport> {
  return shadowLines(boundedLines(file, MAX_LOG_LINE_BYTES));
}

function summary(r: ShadowReport): string {
  const under = r.candidateRevisions.length ? ` under candidate revision ${r.candidateRevisions.join(", ")}` : "";
  return (
    `${r.differing} decision(s) answered otherwise by the shadow candidate${under}: ${r.newlyAllowed} newly allowed, ` +
    `${r.newlyDenied} newly denied, ${r.reasonChanged} with another deny reason; ` +
    `${r.policyDecisions} policy decision(s) in the log ` +
    "(the others agreed or were not sampled: see portier_shadow_decisions_total)" +
    (r.malformedCount ? `; ${r.malformedCount} unreadable line(s)` : "")
  );
}

export function renderShadow(r: ShadowReport): string {
  const lines = r.changes.map(changeLine);
  for (const m of r.malformed) lines.push(`! line ${m.line}: ${m.error}`);
  lines.push(summary(r));
  return lines.join("\n") + "\n";
}

export function renderShadowMarkdown(r: ShadowReport): string {
  const out = ["### Portier shadow policy: what the candidate answered otherwise", "", `**${summary(r)}**`, ""];
  if (r.changes.length === 0)
    return out.concat("The candidate agreed on every logged decision it evaluated.", "").join("\n");
  return out.concat(changeTable(r.changes)).join("\n") + "\n";
}
