/**
 * `sortBy` and `sortOrder` of a SCIM list (RFC 7644 section 3.4.2.3): resources ordered by one attribute's value
 * (a sub-attribute in dotted notation, an extension's with its URN; of a multi-valued attribute, the primary
 * value, else the first), strings without case unless the attribute is case-exact, by code point with no locale.
 * Resources without a value come last in ascending order and first in descending order, as the RFC says.
 * Sorting costs each list request n log n comparisons of its matches (seconds for a million here), so more than
 * MAX_SORTED matches is answered 400 tooMany, the RFC's answer to "more results than the server is willing to
 * process": the client narrows its filter, or lists without sortBy.
 */
import { caseExact } from "./filter.js";
import { GROUP_SCHEMA, isObject, USER_SCHEMA, type ScimResource } from "./resources.js";
import { ScimError } from "./scim-error.js";

type Key = string | number | boolean | undefined;

/** Most matches one list request sorts. */
export const MAX_SORTED = 100_000;

/** The path's segments: an extension's URN first, the core schemas' URN dropped. */
function segments(sortBy: string): string[] {
  const colon = sortBy.lastIndexOf(":");
  const names = sortBy.slice(colon + 1).split(".");
  if (colon < 0) return names;
  const urn = sortBy.slice(0, colon).toLowerCase();
  return urn === USER_SCHEMA.toLowerCase() || urn === GROUP_SCHEMA.toLowerCase()
    ? names
    : [sortBy.slice(0, colon), ...names];
}

/** Of a multi-valued attribute, the value marked primary, else the first. */
const single = (v: unknown): unknown =>
  Array.isArray(v) ? ((v as unknown[]).find((e) => isObject(e) && e.primary === true) ?? v[0]) : v;

function valueAt(resource: ScimResource, path: string[]): unknown {
  let v: unknown = resource;
  for (const name of path) {
    v = single(v);
    if (!isObject(v)) return undefined;
    const key = Object.keys(v).find((k) => k.toLowerCase() === name.toLowerCase());
    v = key === undefined ? undefined : v[key];
  }
  v = single(v);
  return isObject(v) ? v.value : v;
}

function keyOf(v: unknown, exact: boolean): Key {
  if (typeof v === "string") return exact ? v : v.toLowerCase();
  if (typeof v === "number" || typeof v === "boolean") return v;
  return undefined;
}

function compare(a: Key, b: Key): number {
  if (a === undefined || b === undefined) return a === b ? 0 : a === undefined ? 1 : -1;
  if (typeof a !== typeof b) return compare(String(a), String(b));
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The resources in the order of `sortBy` and `sortOrder` (ascending unless given); a new array. */
export function sortResources(resources: ScimResource[], sortBy: string, sortOrder?: string): ScimResource[] {
  const order = (sortOrder ?? "ascending").toLowerCase();
  if (order !== "ascending" && order !== "descending")
    throw new ScimError(400, "invalidValue", `sortOrder: must be ascending or descending, not ${sortOrder}`);
  if (resources.length > MAX_SORTED)
    throw new ScimError(
      400,
      "tooMany",
      `sortBy: ${resources.length} resources match, more than the ${MAX_SORTED} sorted in one request; ` +
        "narrow the filter or list without sortBy",
    );
  const path = segments(sortBy.trim());
  const exact = caseExact(sortBy);
  const keyed = resources.map((r) => ({ r, k: keyOf(valueAt(r, path), exact) }));
  keyed.sort((a, b) => compare(a.k, b.k));
  const out = keyed.map((e) => e.r);
  return order === "descending" ? out.reverse() : out;
}
