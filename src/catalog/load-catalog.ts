/**
 * Loads data/roles.json, data/routes.json and data/tenants.json, validates each with its ajv schema
 * (data/schemas/) and across files (a route's roles exist, templates are unique, a code belongs to one
 * tenant), and composes the bundle's data document (data.catalog in the policies).
 */
import { join } from "node:path";
import { Ajv, type ErrorObject } from "ajv";
import { readJsonFile } from "./read-json-file.js";
import { DataError } from "./data-error.js";

export interface RoleEntry {
  id: string;
  label: string;
  aliases: string[];
}
export interface RouteEntry {
  product: string;
  api: string;
  template: string;
  allowed: "all_synced" | string[];
}
export interface TenantEntry {
  tenant_id: string;
  name?: string;
  codeOrganisme: string[];
}
export interface Catalog {
  roles: RoleEntry[];
  routes: RouteEntry[];
  tenants: TenantEntry[];
}

const ajv = new Ajv({ allErrors: true, strict: true });

/** "/routes/3/allowed/1" -> "routes[3].allowed[1]" */
export function fieldPath(instancePath: string): string {
  return instancePath
    .split("/")
    .slice(1)
    .map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : i === 0 ? p : `.${p}`))
    .join("");
}

function describe(err: ErrorObject): string {
  if (err.keyword === "additionalProperties") return `unknown field "${String(err.params.additionalProperty)}"`;
  if (err.keyword === "required") return `missing field "${String(err.params.missingProperty)}"`;
  return err.message ?? "is invalid";
}

function validated<T>(dir: string, name: string): T {
  const file = join(dir, `${name}.json`);
  const schema = readJsonFile(join(dir, "schemas", `${name}.schema.json`)) as object;
  const value = readJsonFile(file);
  const check = ajv.compile(schema);
  if (!check(value)) {
    // oneOf failures repeat for each branch: report the most specific (deepest) error first.
    const errors = [...(check.errors ?? [])].sort((a, b) => b.instancePath.length - a.instancePath.length);
    const first = errors[0] as ErrorObject;
    throw new DataError(file, fieldPath(first.instancePath) || "(top)", describe(first));
  }
  return value as T;
}

export function loadCatalog(dir: string): Catalog {
  const roles = validated<{ roles: RoleEntry[] }>(dir, "roles").roles;
  const routes = validated<{ routes: RouteEntry[] }>(dir, "routes").routes;
  const tenants = validated<{ tenants: TenantEntry[] }>(dir, "tenants").tenants;

  const rolesFile = join(dir, "roles.json");
  const names = new Map<string, string>();
  roles.forEach((role, i) => {
    for (const name of [role.id, role.label, ...role.aliases]) {
      const owner = names.get(name.normalize("NFC"));
      if (owner && owner !== role.id) throw new DataError(rolesFile, `roles[${i}]`, `"${name}" already names role ${owner}`);
      names.set(name.normalize("NFC"), role.id);
    }
  });
  const ids = new Set(roles.map((r) => r.id));

  const routesFile = join(dir, "routes.json");
  const seen = new Map<string, number>();
  routes.forEach((route, i) => {
    const key = route.template.normalize("NFC").toLowerCase();
    if (seen.has(key)) throw new DataError(routesFile, `routes[${i}].template`, `duplicates routes[${seen.get(key)}] (${route.template})`);
    seen.set(key, i);
    if (route.template !== route.template.normalize("NFC")) throw new DataError(routesFile, `routes[${i}].template`, "must be in Unicode NFC");
    if (Array.isArray(route.allowed)) {
      route.allowed.forEach((role, j) => {
        if (!ids.has(role)) throw new DataError(routesFile, `routes[${i}].allowed[${j}]`, `unknown role "${role}" (roles.json has: ${[...ids].join(", ")})`);
      });
    }
  });

  const tenantsFile = join(dir, "tenants.json");
  const owners = new Map<string, string>();
  const tenantIds = new Set<string>();
  tenants.forEach((tenant, i) => {
    if (tenantIds.has(tenant.tenant_id)) throw new DataError(tenantsFile, `tenants[${i}].tenant_id`, `tenant ${tenant.tenant_id} is listed twice`);
    tenantIds.add(tenant.tenant_id);
    tenant.codeOrganisme.forEach((code, j) => {
      const owner = owners.get(code);
      if (owner) throw new DataError(tenantsFile, `tenants[${i}].codeOrganisme[${j}]`, `code ${code} already belongs to tenant ${owner}`);
      owners.set(code, tenant.tenant_id);
    });
  });
  return { roles, routes, tenants };
}

/** The data document the bundle carries: data.catalog.{roles,routes,tenants}. */
export function bundleData(catalog: Catalog): { catalog: Catalog } {
  return { catalog };
}
