/**
 * The methods of route entries: which methods an entry names (GET when it names none), which entry of a
 * template answers each method (HEAD follows GET unless an entry names HEAD itself), and what is wrong with a
 * method name or with two entries claiming one method of one template. The choices are written down in
 * docs/policies/methods.md; data/schemas/routes.schema.json lists the method names.
 */
import { didYouMean } from "../text/did-you-mean.js";

/** The method names an entry may list (the schema's enum). OPTIONS is never implied; TRACE, CONNECT are not routes'. */
const ROUTE_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;

/**
 * What an entry without `methods` answers: GET (and HEAD, which follows GET). Of ROUTE_METHODS, GET, HEAD and
 * OPTIONS are safe (reads; portier.routes says which a request is), the others writes.
 */
const DEFAULT_METHODS: readonly string[] = ["GET"];

/** The methods an entry names, in its order: its `methods`, or GET. */
export function entryMethods(entry: { methods?: readonly string[] }): readonly string[] {
  return entry.methods ?? DEFAULT_METHODS;
}

/**
 * Which entry answers each method, for the entries of one template (indexes into the route table). HEAD goes to
 * the entry that answers GET unless an entry names HEAD. Entries must not overlap (checked by the loader).
 */
export function methodTable(entries: readonly { index: number; methods: readonly string[] }[]): Record<string, number> {
  const table: Record<string, number> = Object.create(null) as Record<string, number>;
  for (const { index, methods } of entries) for (const method of methods) table[method] ??= index;
  if (table.HEAD === undefined && table.GET !== undefined) table.HEAD = table.GET;
  return table;
}

/** Why a value in `methods` is no method name, in words: its upper-case spelling, or the nearest name. */
export function methodNameProblem(name: unknown): string {
  if (typeof name !== "string") return 'a method is a string such as "POST"';
  const upper = name.toUpperCase();
  if (upper !== name && (ROUTE_METHODS as readonly string[]).includes(upper))
    return `method names are upper-case: write "${upper}"`;
  const hint = didYouMean(upper, ROUTE_METHODS) || ` (a route names ${ROUTE_METHODS.join(", ")})`;
  return `unknown method "${name}"${hint}`;
}
