/**
 * Maps role ids, labels and aliases of the role catalog (data/roles.json) to canonical ids.
 */
import { readFileSync } from "node:fs";

export type RoleResolver = (name: string) => string | undefined;

function key(name: string): string {
  return name.normalize("NFC").trim().toLowerCase();
}

export function loadRoleResolver(rolesFile: string): RoleResolver {
  const doc = JSON.parse(readFileSync(rolesFile, "utf8")) as { roles: { id: string; label: string; aliases?: string[] }[] };
  const names = new Map<string, string>();
  for (const role of doc.roles) {
    for (const n of [role.id, role.label, ...(role.aliases ?? [])]) names.set(key(n), role.id);
  }
  return (name) => names.get(key(name));
}
