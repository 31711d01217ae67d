/**
 * roleNameKey and indexRoleNames: the one normalisation of role names, shared by the catalog check and
 * the resolver, and the refusal of a name that would name two roles.
 */
import { describe, expect, it } from "vitest";
import { indexRoleNames, roleNameKey, RoleNameError } from "../../src/catalog/index.js";

describe("roleNameKey", () => {
  const same: [string, string, string][] = [
    ["case", "ENSEIGNANT JEUNE", "Enseignant jeune"],
    ["accented capitals", "ÉLÈVE ADULTE", "Élève adulte"],
    ["decomposed accents (NFD)", "E\u0301le\u0300ve adulte", "Élève adulte"],
    ["runs of spaces, tabs, edges", "  Enseignant \t  jeune ", "Enseignant jeune"],
    ["no-break space", "Enseignant\u00a0jeune", "Enseignant jeune"],
    ["full-width letters (NFKC)", "\uff25nseignant jeune", "Enseignant jeune"],
  ];
  it.each(same)("ignores %s", (_what, a, b) => expect(roleNameKey(a)).toBe(roleNameKey(b)));

  const different: [string, string, string][] = [
    ["accents", "Eleve adulte", "Élève adulte"],
    ["the apostrophe's code point", "Parents de l\u2019élève jeune", "Parents de l'élève jeune"],
    ["underscore and space", "enseignant_jeune", "enseignant jeune"],
  ];
  it.each(different)("keeps %s significant", (_what, a, b) => expect(roleNameKey(a)).not.toBe(roleNameKey(b)));
});

describe("indexRoleNames", () => {
  const roles = [
    { id: "enseignant_jeune", label: "Enseignant jeune", aliases: ["Professeur jeune"] },
    { id: "directeur_jeune", label: "Directeur jeune", aliases: [] },
  ];

  it("maps the key of every id, label and alias to its role; one role may repeat a name in other case", () => {
    const index = indexRoleNames([{ ...roles[0]!, aliases: ["Professeur jeune", "ENSEIGNANT JEUNE"] }, roles[1]!]);
    expect(Object.fromEntries(index)).toEqual({
      enseignant_jeune: "enseignant_jeune",
      "enseignant jeune": "enseignant_jeune",
      "professeur jeune": "enseignant_jeune",
      directeur_jeune: "directeur_jeune",
      "directeur jeune": "directeur_jeune",
    });
  });

  it("refuses a name of two roles, naming both roles and both fields under the given list name", () => {
    const clash = [roles[0]!, { ...roles[1]!, aliases: ["professeur  JEUNE"] }];
    expect(() => indexRoleNames(clash, "catalog.roles")).toThrow(RoleNameError);
    expect(() => indexRoleNames(clash, "catalog.roles")).toThrow(
      'catalog.roles[1].aliases[0]: "professeur  JEUNE" of role directeur_jeune matches ' +
        'catalog.roles[0].aliases[0] "Professeur jeune" of role enseignant_jeune',
    );
  });
});
