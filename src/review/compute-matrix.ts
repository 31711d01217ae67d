/**
 * The access matrix, computed by asking the compiled policy (not by reading data/): for every route the
 * bundle lists (portier/catalog), one decision per role, for a synced user without a listed role, for an
 * unsynced user, and for an application (client credentials) token.
 */
import { CATALOG_ENTRYPOINT, type InProcessEngine, type Decision } from "../engine/index.js";
import { explainInput } from "./explain.js";

export const PROBE_COLUMNS = ["synced_without_role", "not_synced", "application"] as const;

export interface MatrixRoute {
  product: string;
  api: string;
  template: string;
}
export interface MatrixRole {
  id: string;
  label: string;
}
export interface MatrixCell {
  allow: boolean;
  reason: string;
}
export interface AccessMatrix {
  revision: string;
  roles: MatrixRole[];
  /** Column ids: role ids, then PROBE_COLUMNS. */
  columns: string[];
  rows: (MatrixRoute & { cells: Record<string, MatrixCell> })[];
}

/** A path that matches the template: parameters get placeholder values no tenant owns. */
export function samplePath(template: string): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => `sample-${name}`);
}

const PROBE_TENANT = "00000000-0000-4000-8000-000000000000";

function probe(path: string, flow: "accessCode" | "application", roles: string[], synced: boolean) {
  return explainInput({ method: "GET", path, flow, roles, synced, tenantId: PROBE_TENANT, mode: "enforce" }, path);
}

function cell(d: Decision): MatrixCell {
  return { allow: d.allow, reason: d.reason };
}

export function computeMatrix(engine: InProcessEngine): AccessMatrix {
  const catalog = engine.query(CATALOG_ENTRYPOINT) as { routes?: MatrixRoute[]; roles?: MatrixRole[] } | undefined;
  if (!catalog || !Array.isArray(catalog.routes) || !Array.isArray(catalog.roles)) {
    throw new Error("the bundle's portier/catalog entrypoint did not list routes and roles");
  }
  const roles = catalog.roles;
  const rows = catalog.routes.map((route) => {
    const path = samplePath(route.template);
    const cells: Record<string, MatrixCell> = {};
    for (const role of roles) cells[role.id] = cell(engine.decideSync(probe(path, "accessCode", [role.id], true)));
    cells.synced_without_role = cell(engine.decideSync(probe(path, "accessCode", [], true)));
    cells.not_synced = cell(engine.decideSync(probe(path, "accessCode", [], false)));
    cells.application = cell(engine.decideSync(probe(path, "application", [], false)));
    return { product: route.product, api: route.api, template: route.template, cells };
  });
  return { revision: engine.revision, roles, columns: [...roles.map((r) => r.id), ...PROBE_COLUMNS], rows };
}
