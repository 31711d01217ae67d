/**
 * The parameters of a SCIM list (RFC 7644 section 3.4.2: filter, sortBy, sortOrder, attributes,
 * excludedAttributes, startIndex, count), read from a GET's query string or from the SearchRequest body of a
 * POST to `/.search` (section 3.4.3), where attribute lists are arrays and startIndex and count are integers.
 */
import type { Request } from "express";
import { isObject } from "./resources.js";
import { ScimError } from "./scim-error.js";

/** A query parameter as one string (the first when repeated). */
export function param(req: Request, name: string): string | undefined {
  const v = (req.query as Record<string, unknown>)[name];
  const one: unknown = Array.isArray(v) ? (v as unknown[])[0] : v;
  return typeof one === "string" ? one : undefined;
}

const LIST_PARAMS = [
  "filter",
  "sortBy",
  "sortOrder",
  "attributes",
  "excludedAttributes",
  "startIndex",
  "count",
] as const;
const INTEGERS = new Set<string>(["startIndex", "count"]);
const NAME_LISTS = new Set<string>(["attributes", "excludedAttributes"]);
const SEARCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:SearchRequest";

/** The parameters of a list (RFC 7644 3.4.2), each as a query string would carry it. */
export type ListQuery = Partial<Record<(typeof LIST_PARAMS)[number], string>>;

export function queryOf(req: Request): ListQuery {
  return Object.fromEntries(LIST_PARAMS.map((name) => [name, param(req, name)]));
}

/** The parameters of a POST /.search body (RFC 7644 3.4.3): strings, lists of names, integers. */
export function searchOf(body: unknown): ListQuery {
  if (!isObject(body)) throw new ScimError(400, "invalidSyntax", "the body must be a SearchRequest JSON object");
  const schemas = body.schemas;
  if (!Array.isArray(schemas) || !schemas.includes(SEARCH_SCHEMA))
    throw new ScimError(400, "invalidSyntax", `schemas: must list ${SEARCH_SCHEMA}`);
  const out: ListQuery = {};
  for (const name of LIST_PARAMS) {
    const v = body[name];
    if (v === undefined || v === null) continue;
    const integer = INTEGERS.has(name);
    if (integer && typeof v === "number" && Number.isInteger(v)) out[name] = String(v);
    else if (!integer && typeof v === "string") out[name] = v;
    else if (NAME_LISTS.has(name) && Array.isArray(v) && v.every((a) => typeof a === "string")) out[name] = v.join(",");
    else {
      const kind = integer ? "an integer" : NAME_LISTS.has(name) ? "a list of attribute names" : "a string";
      throw new ScimError(400, "invalidValue", `${name}: must be ${kind}`);
    }
  }
  return out;
}

export function intOf(q: ListQuery, name: "startIndex" | "count", fallback: number): number {
  const v = q[name];
  if (v === undefined || v === "") return fallback;
  if (!/^-?\d+$/.test(v)) throw new ScimError(400, "invalidValue", `${name}: must be an integer`);
  return Number(v);
}
