/**
 * Maps role names (ids, labels and aliases of a role catalog) to canonical role ids. The service builds
 * a resolver per loaded bundle from its catalog, and with it resolves the directory's entries (entryRoles):
 * a decision uses the names of the very bundle that evaluates it.
 * Names compare by roleNameKey (src/catalog/role-name-index.ts), the same key the catalog check uses.
 */
import { readFileSync } from "node:fs";
import { indexRoleNames, roleNameKey, type RoleNames } from "../catalog/role-name-index.js";
import type { DirectoryEntry } from "./compact-index.js";

export type RoleResolver = (name: string) => string | undefined;

/** A directory entry's role ids under one bundle's names; undefined when a name is none of that bundle's roles. */
export type EntryRoles = (entry: DirectoryEntry) => readonly string[] | undefined;

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

/**
 * Resolves directory entries with one resolver, each shared entry once (remembered while the entry lives):
 * a decision pays one WeakMap lookup. An entry naming a role the resolver does not know resolves to
 * undefined: its records are refused as a whole (the user is not synced), never synced with fewer roles.
 */
export function entryRoles(resolve: RoleResolver): EntryRoles {
  const memo = new WeakMap<DirectoryEntry, readonly string[] | null>();
  return (entry) => {
    let ids = memo.get(entry);
    if (ids === undefined) {
      ids = resolveAll(entry.names, resolve);
      memo.set(entry, ids);
    }
    return ids ?? undefined;
  };
}

function resolveAll(names: readonly string[], resolve: RoleResolver): readonly string[] | null {
  const ids: string[] = [];
  for (const name of names) {
    const id = resolve(name);
    if (!id) return null;
    if (!ids.includes(id)) ids.push(id);
  }
  return Object.freeze(ids);
}
