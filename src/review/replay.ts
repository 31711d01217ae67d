/**
 * Impact replay: re-evaluates every decision of a decision log (the service's JSON lines, each carrying
 * the exact policy input) under a candidate policy, and groups what would change by route, roles, flow
 * and reason, newly allowed first. Lines decided before the policy (no token, bad token, invalid path)
 * carry no input and are counted apart: no policy change can alter them. A replay is evidence only when it
 * replayed a decision and read every line (evidenceProblem): an empty log, or a log of other text (the
 * readable lines of `portier dev`), must not pass a gate as "nothing changes".
 */
import { boundedLines, LineTooLong } from "./bounded-lines.js";
import { compareVerdicts, type DecisionInput, type InProcessEngine, type Verdict } from "../engine/index.js";
import { messageOf } from "../errors/caught.js";
import { addPerson, personName, type Holder, type PeopleList } from "./review-people.js";

export type Outcome = Verdict;

export interface ReplayChange {
  change: "newly_allowed" | "newly_denied" | "reason_changed";
  route: string | null;
  /** The method of the grouped decisions, upper-case: a route's methods may have different roles. */
  method: string;
  roles: string[];
  flow: string | null;
  before: Outcome;
  after: Outcome;
  /** How many logged decisions changed this way. */
  count: number;
  /** The first of them: log line number, method and path. */
  example: { line: number; method: string; path: string };
  /** The subjects (sub) and clients (client_id), with their tenant, whose calls changed this way. */
  subjects: PeopleList;
}

export interface ReplayReport {
  /** Lines read; lines of other events and blank lines are skipped without further counting. */
  lines: number;
  replayed: number;
  /** Decision lines without an input: decided before the policy ran. */
  notReplayable: number;
  /** Lines that are not JSON or too long (the first few kept, with their numbers and why). */
  malformed: { line: number; error: string }[];
  malformedCount: number;
  unchanged: number;
  newlyAllowed: number;
  newlyDenied: number;
  reasonChanged: number;
  changes: ReplayChange[];
  /** Policy revisions the log was decided under. */
  loggedRevisions: string[];
  revision: string;
  /** Everyone the log saw call, one holder per flow, role list and synced (for the people a grant change reaches). */
  callers: Holder[];
}

const MAX_MALFORMED_KEPT = 20;
/** A decision log line is a few KiB; a longer one is counted as unreadable, never held. */
export const MAX_LOG_LINE_BYTES = 1024 * 1024;
const ORDER: Record<ReplayChange["change"], number> = { newly_allowed: 0, newly_denied: 1, reason_changed: 2 };

export function isInput(v: unknown): v is DecisionInput {
  const i = v as Partial<DecisionInput> | null;
  return (
    !!i &&
    typeof i === "object" &&
    typeof i.method === "string" &&
    typeof i.path === "string" &&
    typeof i.token === "object" &&
    i.token !== null
  );
}

const CHANGE_NAMES = { new_allow: "newly_allowed", new_deny: "newly_denied", other_reason: "reason_changed" } as const;

/** How an outcome changed (the engine's one comparison, as the shadow counts it), or undefined when it did not. */
export function changeOf(before: Outcome, after: Outcome): ReplayChange["change"] | undefined {
  const change = compareVerdicts(before, after);
  return change === "same" ? undefined : CHANGE_NAMES[change];
}

/** Distinct people remembered per list; beyond, each further caller is counted as new (an upper bound). */
const MAX_PEOPLE_TRACKED = 10_000;
const tracked = new WeakMap<PeopleList, Set<string>>();

/** Adds a person to a list once (by name), remembering at most MAX_PEOPLE_TRACKED names per list. */
function addDistinct(list: PeopleList, name: string): void {
  let seen = tracked.get(list);
  if (!seen) tracked.set(list, (seen = new Set()));
  if (seen.has(name)) return;
  if (seen.size < MAX_PEOPLE_TRACKED) seen.add(name);
  addPerson(list, name);
}

function callerOf(input: DecisionInput): string {
  return personName(input.token);
}

/** Counts one changed decision into its group (same change, method, route, roles, flow, before and after). */
export function addChange(
  groups: Map<string, ReplayChange>,
  c: Omit<ReplayChange, "count" | "example" | "subjects" | "method">,
  line: number,
  input: DecisionInput,
): void {
  const roles = [...c.roles].sort();
  const method = String(input.method).toUpperCase();
  const key = JSON.stringify([c.change, method, c.route, roles, c.flow, c.before, c.after]);
  let group = groups.get(key);
  if (group) group.count++;
  else {
    group = {
      ...c,
      method,
      roles,
      count: 1,
      example: { line, method: input.method, path: input.path },
      subjects: { count: 0, shown: [] },
    };
    groups.set(key, group);
  }
  addDistinct(group.subjects, callerOf(input));
}

/** Counts a caller of the log into its holder (flow, roles, synced). */
function addCaller(holders: Map<string, Holder>, input: DecisionInput, flow: string | null): void {
  const application = flow === "application";
  const names = application ? [] : [...(input.roles ?? [])].sort();
  const synced = application || input.synced === true;
  const tenantId = input.token.tenant_id;
  const who = callerOf(input);
  // One holder per person while they are few enough to remember (a person is then listed once, whatever roles
  // they were seen with); beyond, people of one flow, role list and tenant share a holder.
  const key = JSON.stringify([
    application,
    names,
    synced,
    tenantId ?? null,
    holders.size < MAX_PEOPLE_TRACKED ? who : null,
  ]);
  let h = holders.get(key);
  if (!h) {
    h = {
      flow: application ? "application" : "accessCode",
      names,
      resolved: true,
      synced,
      tenantId,
      people: { count: 0, shown: [] },
    };
    holders.set(key, h);
  }
  addDistinct(h.people, who);
}

/** A group's route, preceded by its method unless that is GET (every route of the spec): "POST /todos". */
export function routeText(c: Pick<ReplayChange, "route" | "method">, none = "(no route)"): string {
  const route = c.route ?? none;
  return c.method === "GET" ? route : `${c.method} ${route}`;
}

/** The groups, newly allowed first, then the largest. */
export function sortedChanges(groups: Map<string, ReplayChange>): ReplayChange[] {
  return [...groups.values()].sort((a, b) => ORDER[a.change] - ORDER[b.change] || b.count - a.count);
}

/** What a log reader counts: every line, and the unreadable ones (the first MAX_MALFORMED_KEPT kept). */
interface LineCounts {
  lines: number;
  malformed: { line: number; error: string }[];
  malformedCount: number;
}

/** Counts an unreadable line of a log. */
export function countUnreadable(into: LineCounts, line: number, error: string): void {
  if (into.malformed.length < MAX_MALFORMED_KEPT) into.malformed.push({ line, error });
  into.malformedCount++;
}

/**
 * The decision lines of a log (replay's and the shadow report's one reader): each parsed, with its line number;
 * every line is counted in `into`, an unreadable one (too long, not JSON) as malformed; blank lines and other
 * events are passed over.
 */
export async function* decisionEntries(
  lines: AsyncIterable<string | LineTooLong> | Iterable<string | LineTooLong>,
  into: LineCounts,
): AsyncGenerator<{ line: number; entry: Record<string, unknown> }> {
  for await (const text of lines) {
    const line = ++into.lines;
    if (text instanceof LineTooLong) {
      countUnreadable(into, line, `longer than the limit of ${MAX_LOG_LINE_BYTES} bytes (${text.bytes})`);
      continue;
    }
    if (text.trim() === "") continue;
    let entry: unknown;
    try {
      entry = JSON.parse(text);
    } catch (err) {
      countUnreadable(into, line, `not JSON (${messageOf(err)})`);
      continue;
    }
    if (entry && typeof entry === "object" && (entry as { event?: unknown }).event === "decision")
      yield { line, entry: entry as Record<string, unknown> };
  }
}

/** Replays log lines (strings, one JSON object each; a LineTooLong is unreadable) under `engine`. */
export async function replayLines(
  lines: AsyncIterable<string | LineTooLong> | Iterable<string | LineTooLong>,
  engine: InProcessEngine,
): Promise<ReplayReport> {
  const report: ReplayReport = {
    lines: 0,
    replayed: 0,
    notReplayable: 0,
    malformed: [],
    malformedCount: 0,
    unchanged: 0,
    newlyAllowed: 0,
    newlyDenied: 0,
    reasonChanged: 0,
    changes: [],
    loggedRevisions: [],
    revision: engine.revision,
    callers: [],
  };
  const callers = new Map<string, Holder>();
  const groups = new Map<string, ReplayChange>();
  const revisions = new Set<string>();
  for await (const { line, entry } of decisionEntries(lines, report)) {
    if (typeof entry.revision === "string") revisions.add(entry.revision);
    if (!isInput(entry.input)) {
      report.notReplayable++;
      continue;
    }
    const before: Outcome = {
      allow: entry.allow === true,
      reason: typeof entry.reason === "string" ? entry.reason : "",
    };
    const d = engine.decide(entry.input);
    const after: Outcome = { allow: d.allow, reason: d.reason };
    report.replayed++;
    addCaller(callers, entry.input, d.flow ?? (typeof entry.flow === "string" ? entry.flow : null));
    const change = changeOf(before, after);
    if (change === undefined) {
      report.unchanged++;
      continue;
    }
    if (change === "newly_allowed") report.newlyAllowed++;
    else if (change === "newly_denied") report.newlyDenied++;
    else report.reasonChanged++;
    const route = d.route?.template ?? (typeof entry.route === "string" ? entry.route : null);
    const flow = d.flow ?? (typeof entry.flow === "string" ? entry.flow : null);
    addChange(groups, { change, route, roles: entry.input.roles ?? [], flow, before, after }, line, entry.input);
  }
  report.changes = sortedChanges(groups);
  report.loggedRevisions = [...revisions];
  report.callers = [...callers.values()];
  return report;
}

/** Replays a decision log file, read line by line (never whole; a line over MAX_LOG_LINE_BYTES is not kept). */
export function replayLogFile(file: string, engine: InProcessEngine): Promise<ReplayReport> {
  return replayLines(boundedLines(file, MAX_LOG_LINE_BYTES), engine);
}

/**
 * Why a replay is no evidence, in one line, or undefined: it replayed no decision, or it skipped unreadable
 * lines (unless `skipUnreadable`: a log that mixes other lines on purpose; they are still counted).
 */
export function evidenceProblem(r: ReplayReport, opts: { skipUnreadable?: boolean } = {}): string | undefined {
  const first = r.malformed[0];
  const unreadable = first
    ? `${r.malformedCount} unreadable line(s), the first at line ${first.line}: ${first.error}`
    : "";
  if (r.replayed === 0) {
    const read = [
      unreadable,
      r.notReplayable > 0 ? `${r.notReplayable} decision(s) made before the policy (not replayable)` : "",
    ].filter(Boolean);
    const what = read.length > 0 ? ` (${read.join("; ")})` : "";
    return `no decision replayed from ${r.lines} line(s)${what}: a replay that saw no decision is no evidence`;
  }
  if (unreadable && !opts.skipUnreadable)
    return `${unreadable}; pass --skip-unreadable if the log mixes other lines on purpose`;
  return undefined;
}

function outcomeText(o: Outcome): string {
  return o.allow ? "allow" : `deny (${o.reason})`;
}

function summary(r: ReplayReport): string {
  return (
    `${r.replayed} decision(s) replayed under revision ${r.revision}: ${r.newlyAllowed} newly allowed, ` +
    `${r.newlyDenied} newly denied, ` +
    `${r.reasonChanged} with another deny reason, ${r.unchanged} unchanged; ${r.notReplayable} decided before ` +
    `the policy (not replayable)` +
    (r.malformedCount ? `; ${r.malformedCount} unreadable line(s)` : "")
  );
}

export function renderReplay(r: ReplayReport): string {
  const lines: string[] = [];
  for (const c of r.changes) lines.push(changeLine(c));
  for (const m of r.malformed) lines.push(`! line ${m.line}: ${m.error}`);
  lines.push(summary(r));
  return lines.join("\n") + "\n";
}

/** One group as a text line: `+` newly allowed, `-` newly denied, `~` another reason. */
export function changeLine(c: ReplayChange): string {
  const sign = c.change === "newly_allowed" ? "+" : c.change === "newly_denied" ? "-" : "~";
  return (
    `${sign} ${c.count} x ${routeText(c)} flow ${c.flow ?? "none"} roles [${c.roles.join(", ")}]: ` +
    `${outcomeText(c.before)} -> ${outcomeText(c.after)}` +
    `   e.g. line ${c.example.line}: ${c.example.method} ${c.example.path}`
  );
}

export function renderReplayMarkdown(r: ReplayReport): string {
  const out = [`### Portier impact replay under revision \`${r.revision}\``, "", `**${summary(r)}**`, ""];
  if (r.changes.length === 0) return out.concat("No logged decision would change.", "").join("\n");
  out.push(...changeTable(r.changes));
  return out.join("\n") + "\n";
}

/** The groups as a markdown table. */
export function changeTable(changes: ReplayChange[]): string[] {
  return [
    "| Change | Decisions | Route | Flow | Roles | Before | After | Example |",
    "|---|---|---|---|---|---|---|---|",
    ...changes.map(
      (c) =>
        `| ${c.change.replace("_", " ")} | ${c.count} | \`${routeText(c, "(none)")}\` | ${c.flow ?? "none"} | ` +
        `${c.roles.join(", ")} | ${outcomeText(c.before)} | ${outcomeText(c.after)} | ` +
        `line ${c.example.line}: \`${c.example.method} ${c.example.path.replace(/\|/g, "\\|")}\` |`,
    ),
  ];
}
