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
  const roles = (data.catalog as { roles?: unknown } | undefined)?.roles;
  if (!Array.isArray(roles))
    throw new EngineLoadError(
      "data_invalid",
      `${where}: catalog.roles must list the role catalog (build the bundle with portier bundle build)`,
    );
  return roles.map((role: unknown, i) => {
    const r = (typeof role === "object" && role !== null ? role : {}) as Record<string, unknown>;
    if (!isString(r.id) || !isString(r.label))
      throw new EngineLoadError("data_invalid", `${where}: catalog.roles[${i}]: id and label must be strings`);
    if (!Array.isArray(r.aliases) || !r.aliases.every(isString))
      throw new EngineLoadError("data_invalid", `${where}: catalog.roles[${i}].aliases must be a list of strings`);
    return { id: r.id, label: r.label, aliases: r.aliases };
  });
}
