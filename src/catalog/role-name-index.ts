/**
 * Role names: the one normalisation (roleNameKey) and the one name index (indexRoleNames) shared by the
 * catalog check (data/roles.json at build time), the bundle check at load time and the resolver that maps
 * directory records and roles claims to role ids. A name whose key would name two roles is refused.
 */
import { PortierError } from "../errors/portier-error.js";

export interface RoleNames {
  id: string;
  label: string;
  aliases: readonly string[];
}

/**
 * The comparison key of a role name: Unicode NFKC (composed accents; compatibility forms such as
 * full-width letters or a no-break space become their plain forms), lower case, runs of white space
 * collapsed to one space, trimmed. Accents and punctuation stay significant: "Eleve adulte" is not
 * "Élève adulte", and "l’élève" (U+2019) is not "l'élève"; add an alias for such a spelling.
 */
export function roleNameKey(name: string): string {
  return name.normalize("NFKC").toLowerCase().normalize("NFKC").replace(/\s+/gu, " ").trim();
}

/** A role name that cannot be indexed: `where` is its field path, e.g. `roles[1].aliases[0]`. */
export class RoleNameError extends PortierError {
  static override readonly code = "role_name_invalid";
  constructor(
    readonly where: string,
    readonly problem: string,
  ) {
    super(`${where}: ${problem}`);
  }
}

/**
 * Maps the key of every id, label and alias to its role id. Throws RoleNameError when a name is blank,
 * holds a comma (a roles claim string is a comma-separated list), or has the key of another role's name.
 * `field` is the path of the roles list in error messages ("roles", "catalog.roles").
 */
export function indexRoleNames(roles: readonly RoleNames[], field = "roles"): Map<string, string> {
  const owners = new Map<string, { id: string; where: string; name: string }>();
  roles.forEach((role, i) => {
    const names: [string, string][] = [
      [`${field}[${i}].id`, role.id],
      [`${field}[${i}].label`, role.label],
      ...role.aliases.map((alias, j): [string, string] => [`${field}[${i}].aliases[${j}]`, alias]),
    ];
    for (const [where, name] of names) {
      const key = roleNameKey(name);
      if (key === "") throw new RoleNameError(where, "is blank");
      if (key.includes(","))
        throw new RoleNameError(
          where,
          `"${name}" contains a comma (a roles claim string is a comma-separated list of names)`,
        );
      const owner = owners.get(key);
      if (owner && owner.id !== role.id) {
        throw new RoleNameError(
          where,
          `"${name}" of role ${role.id} matches ${owner.where} "${owner.name}" of role ${owner.id} ` +
            "(names compare by roleNameKey: case, spacing and Unicode form ignored)",
        );
      }
      if (!owner) owners.set(key, { id: role.id, where, name });
    }
  });
  return new Map([...owners].map(([key, owner]) => [key, owner.id]));
}
