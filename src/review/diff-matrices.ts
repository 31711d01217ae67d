/**
 * Compares two access matrices: every grant gained or lost, route by column, and routes added or removed.
 */
import type { AccessMatrix } from "./compute-matrix.js";

export interface GrantChange {
  template: string;
  column: string;
  change: "gained" | "lost";
  before: string;
  after: string;
}
export interface MatrixDiff {
  routesAdded: string[];
  routesRemoved: string[];
  changes: GrantChange[];
}

function describe(cell: { allow: boolean; reason: string } | undefined): string {
  if (!cell) return "absent";
  return cell.allow ? "allow" : `deny (${cell.reason})`;
}

export function diffMatrices(before: AccessMatrix, after: AccessMatrix): MatrixDiff {
  const old = new Map(before.rows.map((r) => [r.template, r]));
  const now = new Map(after.rows.map((r) => [r.template, r]));
  const columns = [...new Set([...before.columns, ...after.columns])];
  const changes: GrantChange[] = [];
  for (const [template, row] of now) {
    const prev = old.get(template);
    for (const column of columns) {
      const a = prev?.cells[column];
      const b = row.cells[column];
      const wasAllowed = a?.allow === true;
      const isAllowed = b?.allow === true;
      if (wasAllowed !== isAllowed) changes.push({ template, column, change: isAllowed ? "gained" : "lost", before: describe(a), after: describe(b) });
    }
  }
  for (const [template, row] of old) {
    if (now.has(template)) continue;
    for (const column of columns) {
      if (row.cells[column]?.allow) changes.push({ template, column, change: "lost", before: "allow", after: "route removed" });
    }
  }
  return {
    routesAdded: [...now.keys()].filter((t) => !old.has(t)),
    routesRemoved: [...old.keys()].filter((t) => !now.has(t)),
    changes,
  };
}

export function renderDiff(diff: MatrixDiff): string {
  if (diff.changes.length === 0 && diff.routesAdded.length === 0 && diff.routesRemoved.length === 0) return "no change in who may call what\n";
  const lines: string[] = [];
  for (const t of diff.routesAdded) lines.push(`+ route ${t}`);
  for (const t of diff.routesRemoved) lines.push(`- route ${t}`);
  for (const c of diff.changes) lines.push(`${c.change === "gained" ? "+" : "-"} ${c.column} on ${c.template}: ${c.before} -> ${c.after}`);
  const gained = diff.changes.filter((c) => c.change === "gained").length;
  lines.push(`${gained} grant(s) gained, ${diff.changes.length - gained} lost, ${diff.routesAdded.length} route(s) added, ${diff.routesRemoved.length} removed`);
  return lines.join("\n") + "\n";
}
