/**
 * Loads data/roles.json, data/routes.json, data/tenants.json (optional) and data/project.json (optional: the
 * project's choices), validates each with its ajv schema (Portier's own data/schemas/, so a project folder
 * needs no copy) and across files (a route's roles exist, each template names each parameter once and has at most
 * one entry per method, a code belongs to one tenant whatever its case, no role name names two roles), and composes
 * the bundle's data document (data.catalog in the policies).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Ajv, type ErrorObject } from "ajv";
import { dataErrorAt, readJsonFile } from "./read-json-file.js";
import { indexRoleNames, roleNameKey, RoleNameError } from "./role-name-index.js";
import { templateProblem } from "./route-template.js";
import { didYouMean } from "../text/did-you-mean.js";
import { entryMethods, methodNameProblem, methodTable } from "./route-methods.js";

export interface RoleEntry {
  id: string;
  label: string;
  aliases: string[];
}
export interface RouteEntry {
  product: string;
  api: string;
  template: string;
  /** The methods `allowed` applies to; absent: GET (and HEAD, which follows GET). */
  methods?: string[];
  allowed: "all_synced" | string[];
}
export interface TenantEntry {
  tenant_id: string;
  name?: string;
  codeOrganisme: string[];
}
/** The project's choices (data/project.json; data/schemas/project.schema.json says what each means). */
export interface ProjectChoices {
  role_checked_flows: ("accessCode" | "application")[];
  /** Absent: sub and tenant_id. */
  claims?: { subject: string; tenant: string | null };
  user_token: { claims: ("auth_time" | "idp")[]; scope: string | null };
  /** Absent: audience and scope apiclients. */
  application_token?: { audience: string | null; scope: string | null };
  tenant_binding: { parameter: string } | null;
  role_list: { name: string; deprecated: boolean };
}
export interface Catalog {
  roles: RoleEntry[];
  routes: RouteEntry[];
  tenants: TenantEntry[];
  /** Absent when the project has no data/project.json: the policies then apply their defaults. */
  project?: ProjectChoices;
}

/** Portier's schemas of the data files, whichever project folder is loaded (src/ or dist/ alike). */
export const SCHEMAS_DIR = fileURLToPath(new URL("../../data/schemas/", import.meta.url));

// verbose: each error carries the value it is about (err.data), so a template is described in words.
const ajv = new Ajv({ allErrors: true, strict: true, verbose: true });

/** "/routes/3/allowed/1" -> "routes[3].allowed[1]" */
function fieldPath(instancePath: string): string {
  return instancePath
    .split("/")
    .slice(1)
    .map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : i === 0 ? p : `.${p}`))
    .join("");
}

function describe(err: ErrorObject, roles: readonly RoleEntry[]): string {
  if (err.keyword === "additionalProperties") {
    const field = String(err.params.additionalProperty);
    const properties: unknown = err.parentSchema?.properties;
    const known = typeof properties === "object" && properties !== null ? Object.keys(properties) : [];
    return `unknown field "${field}"${didYouMean(field, known)}`;
  }
  if (err.keyword === "enum" && /\/methods\/\d+$/.test(err.instancePath)) return methodNameProblem(err.data);
  if (err.keyword === "required") return `missing field "${String(err.params.missingProperty)}"`;
  if (/^\/claims\/(subject|tenant)$/.test(err.instancePath) && typeof err.data === "string") {
    if (err.keyword === "not") return `"${err.data}" is a claim Portier reads for itself: name another claim`;
    if (err.keyword === "pattern") return `"${err.data}" is not a claim name: 1 to 128 printable ASCII, no spaces`;
  }
  if (err.keyword === "pattern" && typeof err.data === "string") {
    if (/\/template$/.test(err.instancePath))
      return templateProblem(err.data) ?? `"${err.data}" is not a route template`;
    if (/\/allowed\/\d+$/.test(err.instancePath)) return unknownRole(err.data, roles);
  }
  return err.message ?? "is invalid";
}

/**
 * A name in a route's `allowed` list that is no role id: the id of the role it names (a label or an alias, as
 * the matrix shows them), else the nearest id by spelling, else the known ids.
 */
function unknownRole(name: string, roles: readonly RoleEntry[]): string {
  const key = roleNameKey(name);
  const named = roles.find((r) => [r.label, ...r.aliases].some((n) => roleNameKey(n) === key));
  if (named) return `"${name}" is the name of role ${named.id}: write its id "${named.id}"`;
  const ids = roles.map((r) => r.id);
  const hint = didYouMean(name, ids);
  return `unknown role "${name}"${hint || ` (roles.json has: ${ids.join(", ")})`}`;
}

function validated<T>(dir: string, name: string, roles: readonly RoleEntry[] = []): T {
  const file = join(dir, `${name}.json`);
  const schema = readJsonFile(join(SCHEMAS_DIR, `${name}.schema.json`)) as object;
  const value = readJsonFile(file);
  const check = ajv.compile<T>(schema);
  if (!check(value)) {
    // oneOf failures repeat for each branch: report the most specific (deepest) error first.
    const errors = [...(check.errors ?? [])].sort((a, b) => b.instancePath.length - a.instancePath.length);
    const first = errors[0];
    const where = fieldPath(first?.instancePath ?? "") || "(top)";
    throw dataErrorAt(file, where, first ? describe(first, roles) : "is invalid");
  }
  return value;
}

export function loadCatalog(dir: string): Catalog {
  const roles = validated<{ roles: RoleEntry[] }>(dir, "roles").roles;
  const routes = validated<{ routes: RouteEntry[] }>(dir, "routes", roles).routes;
  const tenants = existsSync(join(dir, "tenants.json"))
    ? validated<{ tenants: TenantEntry[] }>(dir, "tenants").tenants
    : [];
  const project = existsSync(join(dir, "project.json"))
    ? projectChoices(validated<ProjectChoices & { $comment?: string }>(dir, "project"))
    : undefined;

  const rolesFile = join(dir, "roles.json");
  try {
    indexRoleNames(roles);
  } catch (err) {
    if (err instanceof RoleNameError) throw dataErrorAt(rolesFile, err.where, err.problem);
    throw err;
  }
  const ids = new Set(roles.map((r) => r.id));

  const routesFile = join(dir, "routes.json");
  /** Per template key: its first entry, and which entry claims each method. */
  const seen = new Map<string, { first: number; template: string; claims: Map<string, number> }>();
  routes.forEach((route, i) => {
    const problem = templateProblem(route.template);
    if (problem) throw dataErrorAt(routesFile, `routes[${i}].template`, problem);
    if (route.template !== route.template.normalize("NFC"))
      throw dataErrorAt(routesFile, `routes[${i}].template`, "must be in Unicode NFC");
    const key = routeKey(route.template);
    const group = seen.get(key) ?? { first: i, template: route.template, claims: new Map<string, number>() };
    seen.set(key, group);
    if (group.template !== route.template)
      throw dataErrorAt(
        routesFile,
        `routes[${i}].template`,
        `duplicates routes[${group.first}] (same literals and parameter positions as ${group.template}): ` +
          "entries of one route spell its template the same way",
      );
    entryMethods(route).forEach((method, j) => {
      const earlier = group.claims.get(method);
      if (earlier !== undefined)
        throw dataErrorAt(
          routesFile,
          route.methods ? `routes[${i}].methods[${j}]` : `routes[${i}].template`,
          `duplicates routes[${earlier}]: both answer ${method} on ${route.template}` +
            (route.methods ? "" : ' (an entry without "methods" answers GET)') +
            "; one entry per method of a route",
        );
      group.claims.set(method, i);
    });
    if (Array.isArray(route.allowed)) {
      route.allowed.forEach((role, j) => {
        if (!ids.has(role)) throw dataErrorAt(routesFile, `routes[${i}].allowed[${j}]`, unknownRole(role, roles));
      });
    }
  });

  const tenantsFile = join(dir, "tenants.json");
  const owners = new Map<string, string>();
  const tenantIds = new Set<string>();
  tenants.forEach((tenant, i) => {
    if (tenantIds.has(tenant.tenant_id))
      throw dataErrorAt(tenantsFile, `tenants[${i}].tenant_id`, `tenant ${tenant.tenant_id} is listed twice`);
    tenantIds.add(tenant.tenant_id);
    // The policy compares codes case-insensitively, so "org001" and "ORG001" are one code.
    tenant.codeOrganisme.forEach((code, j) => {
      const key = code.toLowerCase();
      const owner = owners.get(key);
      if (owner)
        throw dataErrorAt(
          tenantsFile,
          `tenants[${i}].codeOrganisme[${j}]`,
          `code ${code} already belongs to ${owner} (codes compare case-insensitively)`,
        );
      owners.set(key, `tenant ${tenant.tenant_id} as ${code}`);
    });
  });
  if (project?.tenant_binding && project.claims?.tenant === null)
    throw dataErrorAt(
      join(dir, "project.json"),
      "tenant_binding",
      "binds a parameter to the caller's tenant, but claims.tenant is null (no claim names it): set one or null this",
    );
  if (project?.claims && project.claims.subject === project.claims.tenant)
    throw dataErrorAt(
      join(dir, "project.json"),
      "claims.tenant",
      `names the same claim as claims.subject ("${project.claims.subject}")`,
    );
  if (project?.tenant_binding) {
    const { parameter } = project.tenant_binding;
    if (tenants.length > 0 && !routes.some((r) => r.template.includes(`{${parameter}}`)))
      throw dataErrorAt(
        join(dir, "project.json"),
        "tenant_binding.parameter",
        `no route of routes.json has {${parameter}}, so tenants.json binds nothing`,
      );
  }
  return { roles, routes, tenants, ...(project ? { project } : {}) };
}

/** The choices as the policies read them, without the file's comment (claims and application_token when declared). */
function projectChoices(doc: ProjectChoices & { $comment?: string }): ProjectChoices {
  const { role_checked_flows, claims, user_token, application_token, tenant_binding, role_list } = doc;
  return {
    role_checked_flows,
    ...(claims ? { claims } : {}),
    user_token,
    ...(application_token ? { application_token } : {}),
    tenant_binding,
    role_list,
  };
}

/**
 * How the policy matches paths without re-parsing templates on every evaluation (wasm keeps nothing
 * between evaluations). For each path length, `shapes` lists the distinct parameter masks of the routes
 * of that length, most specific first (at the first segment where two masks differ, a literal beats a
 * parameter); each shape gives its literal positions and its routes keyed by their lower-cased literals
 * joined by "/" ("v2/elevesjeunes/absences"). The policy joins the request's segments at those positions,
 * looks the key up, and takes the first shape that has it. `patterns` keeps each route's parameter
 * positions and names. A template with several entries (one per set of methods) is keyed by its first entry;
 * `methods[i]` maps each method the template of entry i answers to the entry that answers it (HEAD follows GET
 * unless an entry names HEAD). `mask`, `specificity` and `by_key` are what policies of older revisions read
 * (the review tools build those with this data document): keep them while such revisions are reviewed.
 */
export interface RouteIndex {
  shapes: { literals: number[]; routes: Record<string, number>; mask: boolean[]; specificity: string }[][];
  by_key: Record<string, number>;
  patterns: { parameters: [number, string][]; specificity: string }[];
  methods: Record<string, number>[];
}

/**
 * How the policy binds {codeOrganisme} to tenants without scanning every tenant: `owners` maps each
 * lower-cased code to its tenant (codes are unique whatever their case), `spellings` holds each code as
 * data/tenants.json spells it (those passed the code alphabet check here), `listed` every tenant named.
 */
export interface TenantIndex {
  owners: Record<string, string>;
  spellings: Record<string, true>;
  listed: Record<string, true>;
}

const isParameter = (segment: string) => /^\{.+\}$/.test(segment);

/** The lookup key of a template: "/v2/{a}/X" -> "v2/{}/x". Two routes with one key are one route. */
function routeKey(template: string): string {
  return template
    .split("/")
    .slice(1)
    .map((s) => (isParameter(s) ? "{}" : s.toLowerCase()))
    .join("/");
}

/** A map for names from data files: without a prototype, "__proto__" is a key like any other. */
const plainMap = <T>(): Record<string, T> => Object.create(null) as Record<string, T>;

export function routeIndex(routes: RouteEntry[]): RouteIndex {
  const split = routes.map((route) => route.template.split("/").slice(1));
  const patterns = split.map((segments) => ({
    parameters: segments.flatMap((s, i): [number, string][] => (isParameter(s) ? [[i, s.slice(1, -1)]] : [])),
    specificity: segments.map((s) => (isParameter(s) ? "1" : "0")).join(""),
  }));
  const longest = Math.max(0, ...split.map((segments) => segments.length));
  const shapes: RouteIndex["shapes"] = Array.from({ length: longest + 1 }, () => []);
  for (const specificity of [...new Set(patterns.map((p) => p.specificity))].sort()) {
    const literals = [...specificity].flatMap((c, i) => (c === "0" ? [i] : []));
    const byLiterals = plainMap<number>();
    patterns.forEach((p, i) => {
      if (p.specificity === specificity) byLiterals[literals.map((j) => split[i]?.[j]?.toLowerCase()).join("/")] ??= i;
    });
    const mask = [...specificity].map((c) => c === "1");
    (shapes[specificity.length] as RouteIndex["shapes"][number]).push({
      literals,
      routes: byLiterals,
      mask,
      specificity,
    });
  }
  const by_key = plainMap<number>();
  const entries = new Map<string, { index: number; methods: readonly string[] }[]>();
  routes.forEach((route, i) => {
    const key = routeKey(route.template);
    by_key[key] ??= i;
    entries.set(key, [...(entries.get(key) ?? []), { index: i, methods: entryMethods(route) }]);
  });
  const tables = new Map([...entries].map(([key, group]) => [key, methodTable(group)]));
  const methods = routes.map((route) => tables.get(routeKey(route.template)) ?? plainMap<number>());
  return { shapes, by_key, patterns, methods };
}

export function tenantIndex(tenants: TenantEntry[]): TenantIndex {
  const owners = plainMap<string>();
  const spellings = plainMap<true>();
  const listed = plainMap<true>();
  for (const tenant of tenants) {
    listed[tenant.tenant_id] = true;
    for (const code of tenant.codeOrganisme) {
      owners[code.toLowerCase()] = tenant.tenant_id;
      spellings[code] = true;
    }
  }
  return { owners, spellings, listed };
}

/** The data document the bundle carries: data.catalog.{roles,routes,tenants,route_index,tenant_index}. */
export function bundleData(catalog: Catalog): {
  catalog: Catalog & { route_index: RouteIndex; tenant_index: TenantIndex };
} {
  return {
    catalog: { ...catalog, route_index: routeIndex(catalog.routes), tenant_index: tenantIndex(catalog.tenants) },
  };
}
