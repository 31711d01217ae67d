/**
 * The role resolver: names of a catalog (ids, labels, aliases) to role ids with the catalog's key, and
 * the refusal of a catalog where one name would map to two roles (the "ENSEIGNANT JEUNE" alias).
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadCatalog, RoleNameError } from "../../src/catalog/index.js";
import { roleResolver } from "../../src/directory/index.js";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";

const ROLES = loadCatalog(join(PROJECT_ROOT, "data")).roles;

describe("roleResolver", () => {
  const resolve = roleResolver(ROLES);
  const cases: [string, string | undefined][] = [
    ["enseignant_jeune", "enseignant_jeune"],
    ["Enseignant jeune", "enseignant_jeune"],
    ["ENSEIGNANT JEUNE", "enseignant_jeune"],
    ["  directeur   jeune ", "directeur_jeune"],
    ["E\u0301le\u0300ve adulte", "eleve_adulte"],
    ["Parent de l'élève jeune", "parent_eleve_jeune"],
    ["Eleve adulte", undefined],
    ["Enseignant", undefined],
    ["enseignant_jeune directeur_jeune", undefined],
    ["", undefined],
  ];
  it.each(cases)("%j -> %j", (name, id) => {
    expect(resolve(name)).toBe(id);
    expect(resolve(name)).toBe(id); // and again, from its memo
  });

  it('refuses a catalog where the alias "ENSEIGNANT JEUNE" is given to directeur_jeune', () => {
    const clash = ROLES.map((r) => (r.id === "directeur_jeune" ? { ...r, aliases: ["ENSEIGNANT JEUNE"] } : r));
    expect(() => roleResolver(clash, "catalog.roles")).toThrow(RoleNameError);
    expect(() => roleResolver(clash, "catalog.roles")).toThrow(
      new RegExp(
        String.raw`catalog\.roles\[1\]\.aliases\[0\]: "ENSEIGNANT JEUNE" of role directeur_jeune matches ` +
          String.raw`catalog\.roles\[0\]\.label "Enseignant jeune" of role enseignant_jeune`,
      ),
    );
  });

  it("stays correct past its memo's bound", () => {
    const r = roleResolver(ROLES);
    for (let i = 0; i < 3000; i++) expect(r(`unknown ${i}`)).toBeUndefined();
    expect(r("Directeur adulte")).toBe("directeur_adulte");
  });
});
