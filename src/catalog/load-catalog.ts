/**
 * Loads data/roles.json, data/routes.json and data/tenants.json, validates each with its ajv schema
 * (data/schemas/) and across files (a route's roles exist, templates are unique, a code belongs to one
 * tenant whatever its case, no role name names two roles), and composes the bundle's data document
 * (data.catalog in the policies).
 */
import { join } from "node:path";
import { Ajv, type ErrorObject } from "ajv";
import { readJsonFile } from "./read-json-file.js";
import { DataError } from "./data-error.js";
import { indexRoleNames, RoleNameError } from "./role-names.js";

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
  try {
    indexRoleNames(roles);
  } catch (err) {
    if (err instanceof RoleNameError) throw new DataError(rolesFile, err.where, err.problem);
    throw err;
  }
  const ids = new Set(roles.map((r) => r.id));

  const routesFile = join(dir, "routes.json");
  const seen = new Map<string, number>();
  routes.forEach((route, i) => {
    const key = routeKey(route.template);
    if (seen.has(key)) throw new DataError(routesFile, `routes[${i}].template`, `duplicates routes[${seen.get(key)}] (same literals and parameter positions as ${routes[seen.get(key) as number]?.template})`);
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
    // The policy compares codes case-insensitively, so "org001" and "ORG001" are one code.
    tenant.codeOrganisme.forEach((code, j) => {
      const key = code.toLowerCase();
      const owner = owners.get(key);
      if (owner) throw new DataError(tenantsFile, `tenants[${i}].codeOrganisme[${j}]`, `code ${code} already belongs to ${owner} (codes compare case-insensitively)`);
      owners.set(key, `tenant ${tenant.tenant_id} as ${code}`);
    });
  });
  return { roles, routes, tenants };
}

/**
 * How the policy matches paths without re-parsing templates on every evaluation (wasm keeps nothing
 * between evaluations). A route's key is its lower-cased literals with "{}" for each parameter, joined
 * by "/". For each path length, `shapes` lists the distinct parameter masks of the routes of that
 * length, most specific first; the policy builds one key per shape from the request and looks it up
 * in `by_key`. `patterns` keeps each route's parameter positions and specificity ("0" literal, "1"
 * parameter, per segment: the smallest key is the most specific).
 */
export interface RouteIndex {
  shapes: { mask: boolean[]; specificity: string }[][];
  by_key: Record<string, number>;
  patterns: { parameters: [number, string][]; specificity: string }[];
}

const isParameter = (segment: string) => /^\{.+\}$/.test(segment);

/** The lookup key of a template: "/v2/{a}/X" -> "v2/{}/x". Two routes with one key are one route. */
export function routeKey(template: string): string {
  return template
    .split("/")
    .slice(1)
    .map((s) => (isParameter(s) ? "{}" : s.toLowerCase()))
    .join("/");
}

export function routeIndex(routes: RouteEntry[]): RouteIndex {
  const patterns = routes.map((route) => {
    const segments = route.template.split("/").slice(1);
    return {
      parameters: segments.flatMap((s, i): [number, string][] => (isParameter(s) ? [[i, s.slice(1, -1)]] : [])),
      specificity: segments.map((s) => (isParameter(s) ? "1" : "0")).join(""),
    };
  });
  const longest = Math.max(0, ...patterns.map((p) => p.specificity.length));
  const shapes: RouteIndex["shapes"] = Array.from({ length: longest + 1 }, () => []);
  for (const p of [...patterns].sort((a, b) => (a.specificity < b.specificity ? -1 : a.specificity > b.specificity ? 1 : 0))) {
    const forLength = shapes[p.specificity.length] as RouteIndex["shapes"][number];
    if (!forLength.some((s) => s.specificity === p.specificity)) forLength.push({ mask: [...p.specificity].map((c) => c === "1"), specificity: p.specificity });
  }
  const by_key: Record<string, number> = {};
  routes.forEach((route, i) => (by_key[routeKey(route.template)] = i));
  return { shapes, by_key, patterns };
}

/** The data document the bundle carries: data.catalog.{roles,routes,tenants,route_index}. */
export function bundleData(catalog: Catalog): { catalog: Catalog & { route_index: RouteIndex } } {
  return { catalog: { ...catalog, route_index: routeIndex(catalog.routes) } };
}
