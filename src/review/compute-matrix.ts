/**
 * The access matrix, computed by asking the compiled policy (not by reading data/): for every route entry the
 * bundle lists (portier/catalog) and every method it names (GET when it names none), one decision per role, for a
 * synced user without a listed role, for an unsynced user, and for an application (client credentials) token.
 * Beside the grid, probes cover every other input the policy decides on: the methods a route has no row for,
 * token shapes, and tenant bindings (each tenant the catalog lists, and one it does not, on each organisation
 * code, and on one nobody owns).
 */
import { CATALOG_ENTRYPOINT, type InProcessEngine, type Decision } from "../engine/index.js";
import { explainInput } from "./explain.js";

const PROBE_COLUMNS = ["synced_without_role", "not_synced", "application"] as const;

export interface MatrixRoute {
  product: string;
  api: string;
  template: string;
  /** The HTTP method of the row, once routes carry methods (GET until then). */
  method?: string;
}
/** A route entry as the catalog lists it: its methods are absent in bundles built before rules per method. */
interface CatalogRoute extends MatrixRoute {
  methods?: string[];
}
export interface MatrixRole {
  id: string;
  label: string;
}
export interface MatrixTenant {
  tenant_id: string;
  name: string;
}
export interface MatrixCell {
  allow: boolean;
  reason: string;
}

/**
 * One decision beyond the GET grid, as data: the caller's flow, the method asked, and for a tenant probe the
 * caller's tenant and the organisation code asked. `caller` and `detail` say the same in words, for display.
 */
export interface MatrixProbe {
  kind: "method" | "token" | "tenant";
  caller: string;
  detail: string;
  template: string;
  cell: MatrixCell;
  flow: "accessCode" | "application";
  method: string;
  /** The caller's tenant (tenant probes). */
  tenantId?: string;
  /** The organisation code asked (tenant probes). */
  code?: string;
}

/** The tenants and codes the tenant probes run over (a diff passes the union of both sides). */
export interface ProbeUniverse {
  tenants: MatrixTenant[];
  codes: string[];
}

export interface AccessMatrix {
  revision: string;
  roles: MatrixRole[];
  /** Column ids: role ids, then PROBE_COLUMNS. */
  columns: string[];
  /** One row per route entry and method it names, in catalog order. */
  rows: (MatrixRoute & { method: string; cells: Record<string, MatrixCell> })[];
  tenants: MatrixTenant[];
  codes: string[];
  probes: MatrixProbe[];
}

const PROBE_METHODS = ["HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
/** A tenant no catalog lists, and an organisation code nobody owns. */
export const UNLISTED_TENANT: MatrixTenant = {
  tenant_id: "00000000-0000-4000-8000-000000000000",
  name: "a tenant not listed",
};
export const UNLISTED_CODE = "sample-codeOrganisme";
const CODE_PARAMETER = "{codeOrganisme}";

/** A path that matches the template: parameters get placeholder values no tenant owns. */
export function samplePath(template: string, values: Record<string, string> = {}): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => values[name] ?? `sample-${name}`);
}

interface Catalog {
  routes: CatalogRoute[];
  roles: MatrixRole[];
  tenants: MatrixTenant[];
  codes: string[];
}

/** What the bundle's portier/catalog entrypoint lists; tenants and codes are empty for older bundles. */
export function readCatalog(engine: InProcessEngine): Catalog {
  const c = engine.query(CATALOG_ENTRYPOINT) as Partial<Catalog> | undefined;
  if (!c || !Array.isArray(c.routes) || !Array.isArray(c.roles)) {
    throw new Error("the bundle's portier/catalog entrypoint did not list routes and roles");
  }
  return {
    routes: c.routes,
    roles: c.roles,
    tenants: Array.isArray(c.tenants) ? c.tenants : [],
    codes: Array.isArray(c.codes) ? c.codes : [],
  };
}

/** Every tenant and code either engine knows, so both sides of a diff are probed alike. */
export function probeUniverse(...engines: InProcessEngine[]): ProbeUniverse {
  const tenants = new Map<string, MatrixTenant>();
  const codes = new Set<string>();
  for (const engine of engines) {
    const c = readCatalog(engine);
    for (const t of c.tenants) if (!tenants.has(t.tenant_id)) tenants.set(t.tenant_id, t);
    for (const code of c.codes) codes.add(code);
  }
  return { tenants: [...tenants.values()], codes: [...codes].sort() };
}

type Caller = {
  flow: "accessCode" | "application";
  roles: string[];
  synced: boolean;
  tenantId: string;
  token?: Record<string, unknown>;
};

function decide(engine: InProcessEngine, method: string, path: string, caller: Caller): MatrixCell {
  const input = explainInput(
    {
      method,
      path,
      flow: caller.flow,
      roles: caller.roles,
      synced: caller.synced,
      tenantId: caller.tenantId,
      mode: "enforce",
    },
    path,
    engine.tokenShape,
  );
  if (caller.token) input.token = { ...input.token, ...caller.token };
  const d: Decision = engine.decide(input);
  return { allow: d.allow, reason: d.reason };
}

/** Each template once, with the methods its rows ask, in catalog order. */
function templates(routes: CatalogRoute[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const route of routes) out.set(route.template, [...(out.get(route.template) ?? []), ...methodsOf(route)]);
  return out;
}

const methodsOf = (route: CatalogRoute): string[] => route.methods ?? ["GET"];

/** Whether a matrix shows methods: as soon as a row asks another method than GET. */
export function showsMethods(m: Pick<AccessMatrix, "rows">): boolean {
  return m.rows.some((r) => r.method !== "GET");
}

/** A row's name: its template, preceded by its method when the matrix shows methods ("POST /todos"). */
export function rowName(row: { method: string; template: string }, withMethod: boolean): string {
  return withMethod ? `${row.method} ${row.template}` : row.template;
}

export function computeMatrix(engine: InProcessEngine, universe?: ProbeUniverse): AccessMatrix {
  const catalog = readCatalog(engine);
  const { roles } = catalog;
  const allRoles = roles.map((r) => r.id);
  const neutral = UNLISTED_TENANT.tenant_id;
  const application: Caller = { flow: "application", roles: [], synced: false, tenantId: neutral };
  const everyRole: Caller = { flow: "accessCode", roles: allRoles, synced: true, tenantId: neutral };
  const rows = catalog.routes.flatMap((route) =>
    methodsOf(route).map((method) => {
      const path = samplePath(route.template);
      const cells: Record<string, MatrixCell> = {};
      for (const role of roles) cells[role.id] = decide(engine, method, path, { ...everyRole, roles: [role.id] });
      cells.synced_without_role = decide(engine, method, path, { ...everyRole, roles: [] });
      cells.not_synced = decide(engine, method, path, { ...everyRole, roles: [], synced: false });
      cells.application = decide(engine, method, path, application);
      return { product: route.product, api: route.api, template: route.template, method, cells };
    }),
  );
  const routeMethods = templates(catalog.routes);

  const probes: MatrixProbe[] = [];
  const callers: [string, Caller][] = [
    ["application", application],
    ["user with every role", everyRole],
  ];
  const shapes: [string, Caller][] = [
    ["user token without the apiclients scope", { ...everyRole, token: { scope: ["openid"] } }],
    ["ID token (nonce, at_hash)", { ...everyRole, token: { nonce: "n", at_hash: "h" } }],
    ["token of no flow (neither sub nor aud apiclients)", { ...application, token: { aud: [] } }],
  ];
  // Token shapes and tenant bindings are asked with the route's first method (GET for every route of the spec).
  for (const [template, methods] of routeMethods) {
    const path = samplePath(template);
    const first = methods[0] ?? "GET";
    for (const method of PROBE_METHODS.filter((m) => !methods.includes(m))) {
      for (const [name, caller] of callers)
        probes.push({
          kind: "method",
          caller: name,
          detail: method,
          template,
          cell: decide(engine, method, path, caller),
          flow: caller.flow,
          method,
        });
    }
    for (const [name, caller] of shapes)
      probes.push({
        kind: "token",
        caller: name,
        detail: first,
        template,
        cell: decide(engine, first, path, caller),
        flow: caller.flow,
        method: first,
      });
  }
  const { tenants, codes } = universe ?? { tenants: catalog.tenants, codes: catalog.codes };
  for (const [template, methods] of [...routeMethods].filter(([t]) => t.includes(CODE_PARAMETER))) {
    const first = methods[0] ?? "GET";
    for (const tenant of [...tenants, UNLISTED_TENANT]) {
      for (const code of [...codes, UNLISTED_CODE]) {
        const path = samplePath(template, { codeOrganisme: code });
        for (const [name, caller] of callers) {
          probes.push({
            kind: "tenant",
            caller: `${name} of ${tenantLabel(tenant)}`,
            detail: `codeOrganisme ${code}`,
            template,
            cell: decide(engine, first, path, { ...caller, tenantId: tenant.tenant_id }),
            flow: caller.flow,
            method: first,
            tenantId: tenant.tenant_id,
            code,
          });
        }
      }
    }
  }
  return {
    revision: engine.revision,
    roles,
    columns: [...roles.map((r) => r.id), ...PROBE_COLUMNS],
    rows,
    tenants: catalog.tenants,
    codes: catalog.codes,
    probes,
  };
}

export function tenantLabel(t: MatrixTenant): string {
  return t.tenant_id === UNLISTED_TENANT.tenant_id
    ? UNLISTED_TENANT.name
    : `tenant ${t.tenant_id}${t.name ? ` (${t.name})` : ""}`;
}
