/**
 * The report of `portier review`, before it is rendered: the grant diff of the two sides folded into one row per
 * caller kind and change (many routes in a row), each with its outcome before and after as data, the line that
 * causes it, and its risk (high when a route opens to callers outside the role lists: users not synced, synced
 * users without a listed role, applications, another tenant, other token shapes); the recorded decisions
 * replayed under HEAD; the policy tests on HEAD; the first line a reviewer acts on, and what --fail-on finds.
 */
import type { AccessMatrix, MatrixCell, MatrixProbe, MatrixRoute } from "./compute-matrix.js";
import type { MatrixDiff } from "./diff-matrices.js";
import { routeText, type ReplayChange, type ReplayReport } from "./replay.js";
import type { Cause, CauseFinder } from "./review-locate.js";
import {
  peopleOf,
  peopleText,
  tenantPeopleOf,
  type Holder,
  type PeopleList,
  type SideAccess,
} from "./review-people.js";

export const FAIL_ON = ["new-allows", "high-risk", "any-change"] as const;
export type FailOn = (typeof FAIL_ON)[number];

export type CallerKind =
  "role" | "synced_without_role" | "not_synced" | "application" | "tenant" | "token_shape" | "method";

/** What a caller got, as data: null when the route does not exist on that side. */
export type Outcome = MatrixCell | null;

export interface ReviewRow {
  change: "gained" | "lost";
  risk: "high" | "normal";
  callerKind: CallerKind;
  /** The caller in words, a role by its label. */
  caller: string;
  /** A role id, for a row of the role grid. */
  role?: string;
  /** The HTTP method asked, as data. */
  method: string;
  /** The method asked, and for a tenant probe the organisation code, in words. */
  request: string;
  routes: MatrixRoute[];
  before: Outcome;
  after: Outcome;
  /** The lines that cause the change, each with the routes it covers (none when a side is a bundle). */
  causes: (Cause & { templates: string[] })[];
  /** Whether --fail-on fails on this row. */
  failing: boolean;
  /**
   * The people whose own access changes this way (rows of the route x caller grid): of the synced-users directory
   * (absent when none was read) and of the decision logs (absent without --log).
   */
  people?: { directory?: PeopleList; seen?: PeopleList };
}

/** Who the grid's changes reach: the directory's people and the logs' callers, judged on each side. */
export interface PeopleInput {
  directory: Holder[] | null;
  seen: Holder[] | null;
  base: SideAccess;
  head: SideAccess;
}

export interface ReplayRow extends ReplayChange {
  log: string;
  risk: "high" | "normal";
  failing: boolean;
}

export interface ReviewSideInfo {
  ref: string;
  kind: string;
  commit?: string;
  revision: string;
}

export interface ReviewTests {
  passed: number;
  /** The coverage required (percent); below it the tests fail. */
  minCoverage: number;
  /** `file` relative to the project and `line` locate the test rule; `error` says why it failed. */
  failed: { name: string; location: string; file: string; line: number; error: string }[];
  coverage: number | null;
}

export interface ReviewErrorLocation {
  /** Relative to the project folder (policies/..., data/...) when the file is one of a side's sources. */
  file: string;
  /** 1-based. */
  line: number;
  /** 1-based; absent when the error names no column. */
  column?: number;
}

export interface ReviewError {
  message: string;
  location?: ReviewErrorLocation;
}

export interface ReviewReport {
  /** The first line: what a reviewer acts on. */
  summary: string;
  base: ReviewSideInfo;
  head: ReviewSideInfo;
  failOn: FailOn;
  /** Whether the command exits 1: --fail-on matched, or the policy tests failed. */
  failing: boolean;
  /** Why it fails, in words (empty when it passes). */
  findings: string[];
  grants: { gained: number; highRisk: number; lost: number };
  routesAdded: string[];
  routesRemoved: string[];
  rows: ReviewRow[];
  /** Policy tests run on HEAD; null when HEAD is a bundle (no sources to test). */
  tests: ReviewTests | null;
  replay: {
    logs: { file: string; replayed: number; notReplayable: number; otherLines: number }[];
    replayed: number;
    newlyAllowed: number;
    newlyDenied: number;
    reasonChanged: number;
    rows: ReplayRow[];
  } | null;
  /** Set when the review could not answer (exit 2): every list above is empty. */
  error?: ReviewError;
}

const PROBE_CALLERS: Record<string, [CallerKind, string]> = {
  synced_without_role: ["synced_without_role", "synced user without a listed role"],
  not_synced: ["not_synced", "user not synced"],
  application: ["application", "application (client credentials)"],
};

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

function routeOf(matrices: AccessMatrix[], template: string, method?: string): MatrixRoute {
  for (const m of matrices) {
    const row = m.rows.find((r) => r.template === template && (method === undefined || r.method === method));
    if (row) return { product: row.product, api: row.api, template };
  }
  return { product: "", api: "", template };
}

function groupCauses(pairs: [string, Cause | undefined][]): ReviewRow["causes"] {
  const out = new Map<string, Cause & { templates: string[] }>();
  for (const [template, cause] of pairs) {
    if (!cause) continue;
    const key = `${cause.file}:${cause.line}:${cause.why}`;
    const c = out.get(key);
    if (c) c.templates.push(template);
    else out.set(key, { ...cause, templates: [template] });
  }
  return [...out.values()];
}

function fails(failOn: FailOn, change: "gained" | "lost" | "reason", risk: "high" | "normal"): boolean {
  if (failOn === "any-change") return true;
  if (change !== "gained") return false;
  return failOn === "new-allows" || risk === "high";
}

/** The grid's changes, one row per caller and change, routes folded. */
function gridRows(
  base: AccessMatrix,
  head: AccessMatrix,
  diff: MatrixDiff,
  causes: CauseFinder,
  failOn: FailOn,
  people: PeopleInput | undefined,
) {
  const labels = new Map([...base.roles, ...head.roles].map((r) => [r.id, r.label]));
  const cell = (m: AccessMatrix, c: MatrixDiff["changes"][number]): Outcome =>
    m.rows.find((r) => r.template === c.template && r.method === c.method)?.cells[c.column] ?? null;
  const groups = new Map<string, ReviewRow>();
  for (const c of diff.changes) {
    const before = cell(base, c);
    const after = cell(head, c);
    const key = JSON.stringify([c.column, c.method, c.change, before, after]);
    let row = groups.get(key);
    if (!row) {
      const probe = PROBE_CALLERS[c.column];
      const risk = probe && c.change === "gained" ? "high" : "normal";
      row = {
        change: c.change,
        risk,
        callerKind: probe ? probe[0] : "role",
        caller: probe ? probe[1] : `${labels.get(c.column) ?? c.column}`,
        ...(probe ? {} : { role: c.column }),
        method: c.method,
        request: c.method,
        routes: [],
        before,
        after,
        causes: [],
        failing: fails(failOn, c.change, risk),
      };
      groups.set(key, row);
    }
    row.routes.push(routeOf([head, base], c.template, c.method));
  }
  for (const row of groups.values()) {
    const column = row.role ?? callerColumn(row);
    row.causes = groupCauses(row.routes.map((r) => [r.template, causes.grant(r.template, column, row.method)]));
    if (people) {
      const change = { column, change: row.change, method: row.method, templates: row.routes.map((r) => r.template) };
      const of = (holders: Holder[]) => peopleOf(holders, change, people.base, people.head);
      row.people = {
        ...(people.directory ? { directory: of(people.directory) } : {}),
        ...(people.seen ? { seen: of(people.seen) } : {}),
      };
    }
  }
  return [...groups.values()];
}

function callerColumn(row: ReviewRow): string {
  return Object.keys(PROBE_CALLERS).find((k) => PROBE_CALLERS[k]?.[0] === row.callerKind) ?? "";
}

function probeRows(
  base: AccessMatrix,
  head: AccessMatrix,
  diff: MatrixDiff,
  causes: CauseFinder,
  failOn: FailOn,
  people: PeopleInput | undefined,
) {
  const key = (p: Pick<MatrixProbe, "kind" | "caller" | "detail" | "template">) =>
    `${p.kind}\0${p.caller}\0${p.detail}\0${p.template}`;
  const baseCells = new Map(base.probes.map((p) => [key(p), p.cell]));
  const headCells = new Map(head.probes.map((p) => [key(p), p.cell]));
  return diff.probeChanges.map((c): ReviewRow => {
    const first = c.templates[0] ?? "";
    const kind: CallerKind = c.kind === "token" ? "token_shape" : c.kind;
    // Another tenant, another token shape, or another method for an application: outside the role lists.
    const outside = c.kind !== "method" || c.flow === "application";
    const risk = c.change === "gained" && outside ? "high" : "normal";
    const { code, tenantId } = c;
    return {
      change: c.change,
      risk,
      callerKind: kind,
      caller: c.caller,
      method: c.method,
      request: c.kind === "tenant" ? `${c.method}, ${c.detail}` : c.detail,
      routes: c.templates.map((t) => routeOf([head, base], t)),
      before: baseCells.get(key({ ...c, template: first })) ?? null,
      after: headCells.get(key({ ...c, template: first })) ?? null,
      causes: groupCauses(
        c.templates.map((t) => [t, code !== undefined ? causes.tenant(t, code, tenantId) : causes.other(t)]),
      ),
      failing: fails(failOn, c.change, risk),
      ...(people && tenantId !== undefined
        ? { people: tenantPeople(people, { tenantId, flow: c.flow, change: c.change, templates: c.templates }) }
        : {}),
    };
  });
}

function tenantPeople(
  people: PeopleInput,
  row: Parameters<typeof tenantPeopleOf>[1],
): NonNullable<ReviewRow["people"]> {
  const of = (holders: Holder[]) => tenantPeopleOf(holders, row, people.base, people.head);
  return {
    ...(people.directory ? { directory: of(people.directory) } : {}),
    ...(people.seen ? { seen: of(people.seen) } : {}),
  };
}

/** Newly allowed recorded calls of an application or a user without roles are high risk. */
function replayRows(reports: { file: string; report: ReplayReport }[], failOn: FailOn): ReplayRow[] {
  return reports.flatMap(({ file, report }) =>
    report.changes.map((c) => {
      const risk =
        c.change === "newly_allowed" && (c.flow !== "accessCode" || c.roles.length === 0) ? "high" : "normal";
      const change = c.change === "newly_allowed" ? "gained" : c.change === "newly_denied" ? "lost" : "reason";
      return { ...c, log: file, risk, failing: fails(failOn, change, risk) };
    }),
  );
}

export function buildReport(input: {
  base: ReviewSideInfo;
  head: ReviewSideInfo;
  baseMatrix: AccessMatrix;
  headMatrix: AccessMatrix;
  diff: MatrixDiff;
  causes: CauseFinder;
  tests: ReviewTests | null;
  logs: { file: string; report: ReplayReport }[] | null;
  failOn: FailOn;
  people?: PeopleInput;
}): ReviewReport {
  const { baseMatrix, headMatrix, diff, causes, failOn } = input;
  const order = (r: ReviewRow) => (r.change === "gained" ? (r.risk === "high" ? 0 : 1) : 2);
  const rows = [
    ...gridRows(baseMatrix, headMatrix, diff, causes, failOn, input.people),
    ...probeRows(baseMatrix, headMatrix, diff, causes, failOn, input.people),
  ].sort((a, b) => order(a) - order(b));
  const count = (pick: (r: ReviewRow) => boolean) => rows.filter(pick).reduce((n, r) => n + r.routes.length, 0);
  const grants = {
    gained: count((r) => r.change === "gained"),
    highRisk: count((r) => r.change === "gained" && r.risk === "high"),
    lost: count((r) => r.change === "lost"),
  };
  const replay = input.logs
    ? {
        logs: input.logs.map(({ file, report }) => ({
          file,
          replayed: report.replayed,
          notReplayable: report.notReplayable,
          otherLines: report.malformedCount,
        })),
        replayed: sum(input.logs, (r) => r.replayed),
        newlyAllowed: sum(input.logs, (r) => r.newlyAllowed),
        newlyDenied: sum(input.logs, (r) => r.newlyDenied),
        reasonChanged: sum(input.logs, (r) => r.reasonChanged),
        rows: replayRows(input.logs, failOn),
      }
    : null;
  const findings: string[] = [];
  const routeChanges = failOn === "any-change" ? diff.routesAdded.length + diff.routesRemoved.length : 0;
  const matched = rows.filter((r) => r.failing).length + (replay?.rows.filter((r) => r.failing).length ?? 0);
  if (matched + routeChanges > 0)
    findings.push(`--fail-on ${failOn} matched ${plural(matched + routeChanges, "change")}`);
  const t = input.tests;
  if (t && t.failed.length > 0) findings.push(`${plural(t.failed.length, "policy test")} failed`);
  else if (t && t.coverage === null) findings.push("policy test coverage not measured");
  else if (t && t.coverage !== null && t.coverage < t.minCoverage)
    findings.push(`policy test coverage ${t.coverage.toFixed(2)}% is below ${t.minCoverage}%`);
  const failing = findings.length > 0;
  return {
    summary: summaryLine(grants, replay),
    base: input.base,
    head: input.head,
    failOn,
    failing,
    findings,
    grants,
    routesAdded: diff.routesAdded,
    routesRemoved: diff.routesRemoved,
    rows,
    tests: input.tests,
    replay,
  };
}

function sum(logs: { report: ReplayReport }[], pick: (r: ReplayReport) => number): number {
  return logs.reduce((n, l) => n + pick(l.report), 0);
}

function summaryLine(grants: ReviewReport["grants"], replay: ReviewReport["replay"]): string {
  const grantText =
    grants.gained + grants.lost === 0
      ? "no grant gained or lost"
      : `${plural(grants.gained, "grant")} gained${grants.highRisk ? ` (${grants.highRisk} high risk)` : ""}, ` +
        `${grants.lost} lost`;
  if (!replay) return `${grantText}; no decision log replayed`;
  const calls =
    replay.newlyAllowed + replay.newlyDenied + replay.reasonChanged === 0
      ? `none of ${plural(replay.replayed, "recorded call")} would change`
      : `${plural(replay.newlyAllowed, "recorded call")} would now be allowed, ${replay.newlyDenied} denied` +
        (replay.reasonChanged ? `, ${replay.reasonChanged} denied for another reason` : "");
  return `${grantText}; ${calls}`;
}

/** A row in one sentence, for SARIF results, JUnit failures and workflow annotations. */
export function describeRow(row: ReviewRow, templates = row.routes.map((r) => r.template)): string {
  const who = row.role ? `${row.caller} (${row.role})` : row.caller;
  const said = (o: Outcome) => (!o ? "no such route" : o.allow ? "allow" : `deny (${o.reason})`);
  const shown =
    templates.length > 3
      ? `${templates.slice(0, 3).join(", ")} and ${templates.length - 3} more`
      : templates.join(", ");
  const p = row.people;
  const reached = [
    ...(p?.directory?.count ? [`directory: ${peopleText(p.directory)}`] : []),
    ...(p?.seen?.count ? [`log: ${peopleText(p.seen)}`] : []),
  ];
  return (
    `${row.risk === "high" ? "high risk: " : ""}${who} ${row.change} ${row.request} on ${shown}: ` +
    `${said(row.before)} -> ${said(row.after)}${reached.length ? `; people: ${reached.join("; ")}` : ""}`
  );
}

/** A group of recorded calls in one sentence, for SARIF results and JUnit cases. */
export function describeReplayRow(r: ReplayRow): string {
  const said = (o: Outcome) => (!o ? "no such route" : o.allow ? "allow" : `deny (${o.reason})`);
  return (
    `${r.risk === "high" ? "high risk: " : ""}${r.count} recorded call(s) ${r.change.replace("_", " ")}: ` +
    `${routeText(r)} flow ${r.flow ?? "none"} roles [${r.roles.join(", ")}]: ` +
    `${said(r.before)} -> ${said(r.after)}; who: ${peopleText(r.subjects)} ` +
    `(e.g. ${r.log}:${r.example.line} ${r.example.method} ${r.example.path})`
  );
}
