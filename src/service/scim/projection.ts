/**
 * `attributes` and `excludedAttributes` of a SCIM read (RFC 7644 section 3.4.2.5, names in the notation of section
 * 3.10): `userName`, a sub-attribute `name.givenName` or `emails.value` (of each value of a multi-valued one), a
 * name qualified by its schema's URN (`urn:ietf:params:scim:schemas:core:2.0:User:userName`), an extension's
 * attribute (`urn:...:enterprise:2.0:User:department`) or the whole extension by its URN. Names compare without
 * case. `id`, `schemas` and `meta` are always answered.
 */
import { GROUP_SCHEMA, isObject, USER_SCHEMA } from "./resources.js";

/** Lowercased names: `true` for a whole attribute, a nested selection for some of its sub-attributes. */
export interface Selection {
  [name: string]: true | Selection;
}

const CORE = new Set([USER_SCHEMA.toLowerCase(), GROUP_SCHEMA.toLowerCase()]);

/** The names of a path, lowercased; an extension's attribute under the extension's URN. */
function segments(path: string): string[] {
  const colon = path.lastIndexOf(":");
  if (colon < 0) return path.split(".");
  const urn = path.slice(0, colon);
  const names = path.slice(colon + 1).split(".");
  return CORE.has(urn) ? names : [urn, ...names];
}

function add(out: Selection, names: string[]): void {
  let node = out;
  for (const [i, name] of names.entries()) {
    const current = node[name];
    if (current === true) return;
    if (i === names.length - 1) node[name] = true;
    else node = node[name] = current ?? {};
  }
}

/** The selection a comma-separated parameter names, or undefined when it is absent or blank. */
export function selection(param: string | undefined): Selection | undefined {
  if (param === undefined || param.trim() === "") return undefined;
  const out: Selection = {};
  for (const raw of param.split(",")) {
    const path = raw.trim().toLowerCase();
    if (path === "") continue;
    add(out, segments(path));
    // A URN alone names a whole extension (its last colon is the URN's own).
    if (path.includes(":")) add(out, [path]);
  }
  return out;
}

function pick(value: unknown, only: Selection): unknown {
  if (Array.isArray(value)) return value.map((v) => pick(v, only));
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const s = only[k.toLowerCase()];
    if (s !== undefined) out[k] = s === true ? v : pick(v, s);
  }
  return out;
}

function omit(value: unknown, excluded: Selection): unknown {
  if (Array.isArray(value)) return value.map((v) => omit(v, excluded));
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const s = excluded[k.toLowerCase()];
    if (s === undefined) out[k] = v;
    else if (s !== true) out[k] = omit(v, s);
  }
  return out;
}

/** The resource with only `only` (when given), else without `excluded` (when given); id, schemas and meta kept. */
export function project(
  resource: Record<string, unknown>,
  only: Selection | undefined,
  excluded: Selection | undefined,
): Record<string, unknown> {
  if (only) return pick(resource, { ...only, id: true, schemas: true, meta: true }) as Record<string, unknown>;
  if (!excluded) return resource;
  const { id: _id, schemas: _schemas, meta: _meta, ...rest } = excluded;
  return omit(resource, rest) as Record<string, unknown>;
}
