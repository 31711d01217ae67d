/**
 * Where a change of `portier review` comes from: the line of HEAD's sources that causes it, found by comparing
 * the two sides' catalogs (src/catalog: data/routes.json, data/roles.json, data/tenants.json, validated) and .rego
 * files; the data files' text serves only to number lines. A role added to a route
 * points at that route's `allowed` line; a binding moved, at the tenant's line with the code; a policy change,
 * at the first changed line of the first changed .rego file. Paths are relative to the project folder. A route
 * is a template and a method: of a template's several entries, the one naming the method (GET when none names it).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { entryMethods, loadCatalog, type Catalog, type RoleEntry, type RouteEntry } from "../catalog/index.js";

export interface Cause {
  file: string;
  /** 1-based. */
  line: number;
  /** What changed there, in words. */
  why: string;
}

interface Side {
  /** "METHOD template" -> the entry answering it, and which of the template's entries it is (0 the first). */
  routes: Map<string, RouteEntry & { ordinal: number }>;
  roles: Map<string, RoleEntry>;
  tenantsText: string;
  /** tenant_id -> its codes. */
  tenants: Map<string, string[]>;
  text: Record<string, string>;
  rego: Map<string, string>;
}

const ROUTES = "data/routes.json";
const ROLES = "data/roles.json";
const TENANTS = "data/tenants.json";

function readText(folder: string, file: string): string {
  const path = join(folder, file);
  return existsSync(path) ? readFileSync(path, "utf8") : "";
}

/** The side's catalog, validated (src/catalog); an empty one for a revision whose data/ the catalog cannot read. */
function catalogOf(folder: string): Catalog {
  try {
    return loadCatalog(join(folder, "data"));
  } catch {
    return { roles: [], routes: [], tenants: [] };
  }
}

function regoFiles(folder: string, dir = join(folder, "policies"), out = new Map<string, string>()) {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir).sort()) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) regoFiles(folder, full, out);
    else if (name.endsWith(".rego") && !name.endsWith("_test.rego"))
      out.set(relative(folder, full), readFileSync(full, "utf8"));
  }
  return out;
}

function readSide(folder: string): Side {
  const text: Record<string, string> = {};
  // The text only for the lines; what the files say comes from the catalog.
  for (const file of [ROUTES, ROLES, TENANTS]) text[file] = readText(folder, file);
  const catalog = catalogOf(folder);
  const routes = new Map<string, RouteEntry & { ordinal: number }>();
  const ordinals = new Map<string, number>();
  for (const r of catalog.routes) {
    const ordinal = ordinals.get(r.template) ?? 0;
    ordinals.set(r.template, ordinal + 1);
    for (const method of entryMethods(r))
      if (!routes.has(`${method} ${r.template}`)) routes.set(`${method} ${r.template}`, { ...r, ordinal });
  }
  return {
    routes,
    roles: new Map(catalog.roles.map((r) => [r.id, r])),
    tenantsText: text[TENANTS] ?? "",
    tenants: new Map(catalog.tenants.map((t) => [t.tenant_id, t.codeOrganisme])),
    text,
    rego: regoFiles(folder),
  };
}

/** The 1-based number of the first line at or after `from` (0-based) that contains `needle`, or 0. */
function lineWith(text: string, needle: string | RegExp, from = 0): number {
  const lines = text.split("\n");
  for (let i = from; i < lines.length; i++) {
    const line = lines[i] ?? "";
    if (typeof needle === "string" ? line.includes(needle) : needle.test(line)) return i + 1;
  }
  return 0;
}

function firstDifferentLine(a: string, b: string): number {
  const x = a.split("\n");
  const y = b.split("\n");
  for (let i = 0; i < y.length; i++) if (x[i] !== y[i]) return i + 1;
  return Math.max(1, y.length);
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Finds the causes of changes between two source folders; every method answers undefined without sources. */
export class CauseFinder {
  private readonly base: Side | undefined;
  private readonly head: Side | undefined;
  private readonly regoCause: Cause | undefined;

  constructor(baseFolder: string | undefined, headFolder: string | undefined) {
    this.base = baseFolder ? readSide(baseFolder) : undefined;
    this.head = headFolder ? readSide(headFolder) : undefined;
    this.regoCause = this.firstRegoChange();
  }

  private firstRegoChange(): Cause | undefined {
    if (!this.base || !this.head) return undefined;
    for (const [file, text] of this.head.rego) {
      const old = this.base.rego.get(file);
      if (old === undefined) return { file, line: 1, why: "policy file added" };
      if (old !== text) return { file, line: firstDifferentLine(old, text), why: "policy changed" };
    }
    const removed = [...this.base.rego.keys()].find((f) => !this.head?.rego.has(f));
    return removed ? { file: removed, line: 1, why: "policy file removed" } : undefined;
  }

  /** The line of the template's entry answering `method` in HEAD's routes.json (its `allowed` line with key). */
  private routeLine(template: string, key?: "allowed", method = "GET"): number {
    const text = this.head?.text[ROUTES] ?? "";
    const at = this.entryLine(text, template, this.head?.routes.get(`${method} ${template}`)?.ordinal ?? 0);
    if (!at || !key) return at || 1;
    return lineWith(text, `"${key}"`, at - 1) || at;
  }

  /** The line of the template's entry number `ordinal` (0 the first), or of its first mention. */
  private entryLine(text: string, template: string, ordinal: number): number {
    const needle = `"template": ${JSON.stringify(template)}`;
    let at = lineWith(text, needle);
    for (let i = 0; i < ordinal && at; i++) at = lineWith(text, needle, at) || at;
    return at || lineWith(text, JSON.stringify(template));
  }

  /**
   * A cell of the route x caller grid: `column` is a role id or synced_without_role, not_synced, application;
   * `method` the row's method.
   */
  grant(template: string, column: string, method = "GET"): Cause | undefined {
    if (!this.head) return undefined;
    const line = (key?: "allowed") => this.routeLine(template, key, method);
    if (!this.base) return { file: ROUTES, line: line("allowed"), why: "the route's grants" };
    const before = this.base.routes.get(`${method} ${template}`);
    const after = this.head.routes.get(`${method} ${template}`);
    if (!after)
      return { file: ROUTES, line: lineWith(this.head.text[ROUTES] ?? "", '"routes"') || 1, why: "route removed" };
    if (!before) return { file: ROUTES, line: line(), why: "route added" };
    if (!same(before.allowed, after.allowed))
      return { file: ROUTES, line: line("allowed"), why: `allowed: ${JSON.stringify(after.allowed)}` };
    if (!same(this.base.roles.get(column), this.head.roles.get(column))) {
      const line = lineWith(this.head.text[ROLES] ?? "", new RegExp(`"id"\\s*:\\s*${JSON.stringify(column)}`));
      return { file: ROLES, line: line || 1, why: line ? `role ${column} changed` : `role ${column} removed` };
    }
    return this.regoCause ?? { file: ROUTES, line: line("allowed"), why: "the route's grants" };
  }

  /**
   * A tenant-binding probe: `code` the organisation code asked, `tenantId` the caller's tenant. The caller's
   * tenant's line when its own codes changed (at the code when it now lists it), else the line that now lists
   * the code, else the line of the tenant that listed it before.
   */
  tenant(template: string, code: string, tenantId: string | undefined): Cause | undefined {
    if (!this.head) return undefined;
    if (!this.base || this.base.tenantsText === this.head.tenantsText)
      return this.regoCause ?? { file: ROUTES, line: this.routeLine(template), why: "the route" };
    const text = this.head.tenantsText;
    const codeKey = code.toLowerCase();
    const at = (owner: string, listsCode: boolean): number => {
      const line = lineWith(text, JSON.stringify(owner));
      return line && listsCode ? lineWith(text, JSON.stringify(code), line - 1) || line : line;
    };
    const codes = (side: Side, id: string) => (side.tenants.get(id) ?? []).map((c) => c.toLowerCase());
    const owner = (side: Side) => [...side.tenants].find(([, cs]) => cs.some((c) => c.toLowerCase() === codeKey))?.[0];
    let line = 0;
    if (tenantId && !same(codes(this.base, tenantId), codes(this.head, tenantId)))
      line = at(tenantId, codes(this.head, tenantId).includes(codeKey));
    const now = owner(this.head);
    const was = owner(this.base);
    if (!line && now) line = at(now, true);
    if (!line && was) line = at(was, false);
    return { file: TENANTS, line: line || 1, why: `binding of ${code} changed` };
  }

  /** Another method or token shape on a route: only a policy or a route change can cause it. */
  other(template: string): Cause | undefined {
    if (!this.head) return undefined;
    const known = (side: Side | undefined) => [...(side?.routes.values() ?? [])].some((r) => r.template === template);
    const method = [...this.head.routes].find(([, r]) => r.template === template)?.[0].split(" ")[0];
    if (!known(this.head) || !known(this.base)) return this.grant(template, "", method);
    return this.regoCause ?? { file: ROUTES, line: this.routeLine(template), why: "the route" };
  }
}
