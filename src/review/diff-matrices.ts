/**
 * Compares two access matrices: every grant gained or lost in the route x role grid (a row is a route and a
 * method), every probe (other methods, token shapes, tenant bindings) whose answer changed, and routes added or
 * removed. Rendered as text for a terminal, Markdown for a pull-request comment, or JSON. When either side shows
 * methods (a route answers another method than GET), each route is named with its method ("POST /todos").
 */
import { rowName, showsMethods, type AccessMatrix, type MatrixCell, type MatrixProbe } from "./compute-matrix.js";

export interface GrantChange {
  template: string;
  /** The method of the grid row. */
  method: string;
  column: string;
  change: "gained" | "lost";
  before: string;
  after: string;
}

/** Probes of one kind, caller and detail whose answer changed the same way, on one or more routes. */
export interface ProbeChange extends Pick<MatrixProbe, "flow" | "method" | "tenantId" | "code"> {
  kind: MatrixProbe["kind"];
  caller: string;
  detail: string;
  templates: string[];
  change: "gained" | "lost";
  before: string;
  after: string;
}

export interface MatrixDiff {
  /** Whether routes are named with their method (either side has a row of another method than GET). */
  methods: boolean;
  /** Rows added and removed, by name: the template, or "POST /todos" when methods are shown. */
  routesAdded: string[];
  routesRemoved: string[];
  changes: GrantChange[];
  probeChanges: ProbeChange[];
}

function describe(cell: MatrixCell | undefined): string {
  if (!cell) return "absent";
  return cell.allow ? "allow" : `deny (${cell.reason})`;
}

const gainedFirst = <T extends { change: "gained" | "lost" }>(a: T, b: T) =>
  a.change === b.change ? 0 : a.change === "gained" ? -1 : 1;

function diffProbes(before: MatrixProbe[], after: MatrixProbe[]): ProbeChange[] {
  const key = (p: MatrixProbe) => `${p.kind}\0${p.caller}\0${p.detail}\0${p.template}`;
  const old = new Map(before.map((p) => [key(p), p]));
  const now = new Map(after.map((p) => [key(p), p]));
  const groups = new Map<string, ProbeChange>();
  for (const k of new Set([...old.keys(), ...now.keys()])) {
    const a = old.get(k);
    const b = now.get(k);
    const probe = b ?? a;
    if (!probe) continue;
    if ((a?.cell.allow === true) === (b?.cell.allow === true)) continue;
    const change = b?.cell.allow === true ? "gained" : "lost";
    const was = describe(a?.cell);
    const is = b ? describe(b.cell) : "route removed";
    const g = `${probe.kind}\0${probe.caller}\0${probe.detail}\0${change}\0${was}\0${is}`;
    const group = groups.get(g);
    if (group) group.templates.push(probe.template);
    else
      groups.set(g, {
        kind: probe.kind,
        caller: probe.caller,
        detail: probe.detail,
        flow: probe.flow,
        method: probe.method,
        ...(probe.tenantId !== undefined ? { tenantId: probe.tenantId } : {}),
        ...(probe.code !== undefined ? { code: probe.code } : {}),
        templates: [probe.template],
        change,
        before: was,
        after: is,
      });
  }
  return [...groups.values()].sort(gainedFirst);
}

type Row = AccessMatrix["rows"][number];

export function diffMatrices(before: AccessMatrix, after: AccessMatrix): MatrixDiff {
  const methods = showsMethods(before) || showsMethods(after);
  const rows = (m: AccessMatrix) => new Map(m.rows.map((r): [string, Row] => [`${r.method} ${r.template}`, r]));
  const old = rows(before);
  const now = rows(after);
  const columns = [...new Set([...before.columns, ...after.columns])];
  const changes: GrantChange[] = [];
  for (const [key, row] of now) {
    const prev = old.get(key);
    for (const column of columns) {
      const a = prev?.cells[column];
      const b = row.cells[column];
      const wasAllowed = a?.allow === true;
      const isAllowed = b?.allow === true;
      if (wasAllowed !== isAllowed)
        changes.push({
          template: row.template,
          method: row.method,
          column,
          change: isAllowed ? "gained" : "lost",
          before: describe(a),
          after: describe(b),
        });
    }
  }
  for (const [key, row] of old) {
    if (now.has(key)) continue;
    for (const column of columns) {
      if (row.cells[column]?.allow)
        changes.push({
          template: row.template,
          method: row.method,
          column,
          change: "lost",
          before: "allow",
          after: "route removed",
        });
    }
  }
  const named = (from: Map<string, Row>, not: Map<string, Row>) =>
    [...from].filter(([key]) => !not.has(key)).map(([, r]) => rowName(r, methods));
  return {
    methods,
    routesAdded: named(now, old),
    routesRemoved: named(old, now),
    changes: changes.sort(gainedFirst),
    probeChanges: diffProbes(before.probes ?? [], after.probes ?? []),
  };
}

export function hasChanges(d: MatrixDiff): boolean {
  return d.changes.length + d.probeChanges.length + d.routesAdded.length + d.routesRemoved.length > 0;
}

function routesText(templates: string[], quote = (t: string) => t): string {
  const shown = templates
    .slice(0, templates.length <= 3 ? 3 : 2)
    .map(quote)
    .join(", ");
  return templates.length <= 3 ? shown : `${templates.length} routes (${shown}, ...)`;
}

function probeWho(c: ProbeChange): string {
  if (c.kind === "method") return `${c.detail} by ${c.caller}`;
  if (c.kind === "tenant") return `${c.caller} with ${c.detail}`;
  return c.caller;
}

function summary(d: MatrixDiff): string {
  const gained = d.changes.filter((c) => c.change === "gained").length;
  const probeGained = d.probeChanges.filter((c) => c.change === "gained").length;
  return (
    `${gained} grant(s) gained, ${d.changes.length - gained} lost; ${probeGained} other decision group(s) ` +
    `newly allowed, ` +
    `${d.probeChanges.length - probeGained} newly denied; ${d.routesAdded.length} route(s) added, ` +
    `${d.routesRemoved.length} removed`
  );
}

export function renderDiff(d: MatrixDiff): string {
  if (!hasChanges(d)) return "no change in who may call what\n";
  const lines: string[] = [];
  for (const t of d.routesAdded) lines.push(`+ route ${t}`);
  for (const t of d.routesRemoved) lines.push(`- route ${t}`);
  for (const c of d.changes)
    lines.push(
      `${c.change === "gained" ? "+" : "-"} ${c.column} on ${rowName(c, d.methods)}: ${c.before} -> ${c.after}`,
    );
  for (const c of d.probeChanges)
    lines.push(
      `${c.change === "gained" ? "+" : "-"} ${probeWho(c)} on ${routesText(c.templates)}: ${c.before} -> ${c.after}`,
    );
  lines.push(summary(d));
  return lines.join("\n") + "\n";
}

function mdCell(s: string): string {
  return s.replace(/\|/g, "\\|").replace(/\n/g, " ");
}

/** Markdown for a pull-request comment: a summary line and one table row per change, gains first. */
export function renderDiffMarkdown(d: MatrixDiff, labels: { before: string; after: string }): string {
  const out = [`### Portier policy diff: \`${labels.before}\` -> \`${labels.after}\``, ""];
  if (!hasChanges(d)) return out.concat("No change in who may call what.", "").join("\n");
  out.push(`**${summary(d)}**`, "");
  if (d.routesAdded.length + d.routesRemoved.length > 0) {
    for (const t of d.routesAdded) out.push(`- route added: \`${mdCell(t)}\``);
    for (const t of d.routesRemoved) out.push(`- route removed: \`${mdCell(t)}\``);
    out.push("");
  }
  out.push("| Change | Who | Route(s) | Before | After |", "|---|---|---|---|---|");
  for (const c of d.changes)
    out.push(`| ${c.change} | ${mdCell(c.column)} | \`${mdCell(rowName(c, d.methods))}\` | ${c.before} | ${c.after} |`);
  for (const c of d.probeChanges)
    out.push(
      `| ${c.change} | ${mdCell(probeWho(c))} | ${mdCell(routesText(c.templates, (t) => `\`${t}\``))} | ` +
        `${c.before} | ${c.after} |`,
    );
  return out.join("\n") + "\n";
}
