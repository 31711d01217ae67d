/**
 * Maps role names (ids, labels and aliases of a role catalog) to canonical role ids. The service builds
 * its resolver from the active bundle's catalog, so names and policy always come from one bundle.
 * Names compare by roleNameKey (src/catalog/role-names.ts), the same key the catalog check uses.
 */
import { readFileSync } from "node:fs";
import { indexRoleNames, roleNameKey, type RoleNames } from "../catalog/role-names.js";

export type RoleResolver = (name: string) => string | undefined;

/** Raw names remembered per resolver: directory feeds repeat a handful of names millions of times. */
const MEMO_LIMIT = 1024;

/** Throws RoleNameError when a name of the catalog would name two roles (or is blank or holds a comma). */
export function roleResolver(roles: readonly RoleNames[], field = "roles"): RoleResolver {
  const byKey = indexRoleNames(roles, field);
  const memo = new Map<string, string | undefined>();
  return (name) => {
    if (memo.has(name)) return memo.get(name);
    const id = byKey.get(roleNameKey(name));
    if (memo.size < MEMO_LIMIT) memo.set(name, id);
    return id;
  };
}

/** A resolver that knows no name: the service's until a bundle is loaded. */
export const NO_ROLE_NAMES: RoleResolver = () => undefined;

/** Resolver for a roles.json file (tools, tests and benchmarks; the service reads the bundle instead). */
export function loadRoleResolver(rolesFile: string): RoleResolver {
  return roleResolver((JSON.parse(readFileSync(rolesFile, "utf8")) as { roles: RoleNames[] }).roles);
}
