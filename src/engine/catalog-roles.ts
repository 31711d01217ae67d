/**
 * Reads the role catalog a bundle carries (data.catalog.roles: id, label, aliases), so that the service
 * resolves role names with the same bundle its policy decides with. Checks the shape only; the names
 * themselves (collisions) are checked by whoever indexes them.
 */
import { EngineLoadError } from "./errors.js";
import type { CatalogRole } from "./types.js";

const isString = (v: unknown): v is string => typeof v === "string";

export function catalogRoles(data: Record<string, unknown>, source: string): CatalogRole[] {
  const where = `${source}:/data.json`;
  const catalog = data.catalog;
  const roles = typeof catalog === "object" && catalog !== null && "roles" in catalog ? catalog.roles : undefined;
  if (!Array.isArray(roles))
    throw new EngineLoadError(
      "data_invalid",
      `${where}: catalog.roles must list the role catalog (build the bundle with portier bundle build)`,
    );
  return roles.map((role: unknown, i) => {
    const r: object = typeof role === "object" && role !== null ? role : {};
    const id = "id" in r ? r.id : undefined;
    const label = "label" in r ? r.label : undefined;
    const aliases = "aliases" in r ? r.aliases : undefined;
    if (!isString(id) || !isString(label))
      throw new EngineLoadError("data_invalid", `${where}: catalog.roles[${i}]: id and label must be strings`);
    if (!Array.isArray(aliases) || !aliases.every(isString))
      throw new EngineLoadError("data_invalid", `${where}: catalog.roles[${i}].aliases must be a list of strings`);
    return { id, label, aliases };
  });
}
