/**
 * The synced-users directory: JSON and NDJSON (sealed), role names kept as written and resolved per bundle
 * (labels/aliases mapped to ids; a record naming an unknown role is not synced under that bundle), bad shapes
 * reported, reload on change with a broken file keeping the old index, and 200,000 records all found.
 */
import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync, renameSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  Directory,
  DirectoryLoadError,
  entryRoles,
  loadRoleResolver,
  parseDirectory,
  roleResolver,
  type DirectoryEntry,
} from "../../src/directory/index.js";
import { TENANT_A } from "../support/sample.js";
import { sealNdjson } from "../support/directory-files.js";
import { until } from "../support/until.js";

const ROLES = fileURLToPath(new URL("../../data/roles.json", import.meta.url));
const resolve = loadRoleResolver(ROLES);
const rolesOf = entryRoles(resolve);
const roles = (entry: DirectoryEntry | undefined) => (entry ? rolesOf(entry) : undefined);
const T = TENANT_A;
const opened: Directory[] = [];
afterEach(() => opened.splice(0).forEach((d) => d.close()));

describe("parseDirectory", () => {
  it("reads a JSON array, keeps the names as written, and resolves labels and aliases to role ids", () => {
    const idx = parseDirectory(
      JSON.stringify([
        { sub: "a", tenant_id: T, roles: ["enseignant_jeune"] },
        { sub: "b", tenant_id: T, roles: ["Parent de l'élève jeune", "ÉLÈVE ADULTE"] },
      ]),
      "dir.json",
    );
    expect(idx.entries.get("a")).toEqual({ tenant_id: T, names: ["enseignant_jeune"] });
    expect(roles(idx.entries.get("b"))).toEqual(["parent_eleve_jeune", "eleve_adulte"]);
    expect(idx.rejected).toBe(0);
  });

  it(
    "reads sealed NDJSON and reports records with bad shapes by line, without keeping them; unknown names resolve " +
      "to nothing",
    () => {
      const text = sealNdjson([
        JSON.stringify({ sub: "a", tenant_id: T, roles: ["directeur_jeune"] }),
        "",
        JSON.stringify({ sub: "b", tenant_id: T, roles: ["astronaute"] }),
        JSON.stringify({ sub: "c", roles: [] }),
        JSON.stringify({ sub: "d", tenant_id: T, roles: "directeur_jeune" }),
        JSON.stringify({ sub: "e", tenant_id: T, roles: ["directeur_jeune", 7] }),
      ]);
      const idx = parseDirectory(text, "d.ndjson");
      expect(["a", "b", "c", "d", "e"].filter((s) => idx.entries.get(s))).toEqual(["a", "b"]);
      expect(roles(idx.entries.get("a"))).toEqual(["directeur_jeune"]);
      expect(roles(idx.entries.get("b"))).toBeUndefined();
      expect(idx.rejected).toBe(3);
      expect(idx.problems[0]).toContain("line 4: tenant_id");
      expect(idx.problems[1]).toBe("d.ndjson line 5: roles must be an array");
      expect(idx.problems[2]).toBe("d.ndjson line 6: roles[1] must be a role name (a non-blank string)");
    },
  );

  it("refuses malformed JSON with the file and line", () => {
    expect(() => parseDirectory("[{", "x.json")).toThrow(DirectoryLoadError);
    expect(() => parseDirectory('{"sub":"a","tenant_id":"t","roles":[]}\n{oops', "x.ndjson")).toThrow(/x\.ndjson:2/);
  });

  it("indexes 200,000 records and finds each one (speed is measured in make bench)", () => {
    const lines: string[] = [];
    for (let i = 0; i < 200_000; i++)
      lines.push(
        `{"sub":"00000000-0000-4000-8000-${i.toString().padStart(12, "0")}",` +
          `"tenant_id":"${T}","roles":["enseignant_jeune"]}`,
      );
    const idx = parseDirectory(sealNdjson(lines), "big.ndjson");
    expect(idx.entries.size).toBe(200_000);
    for (let i = 0; i < 200_000; i += 997)
      expect(roles(idx.entries.get(`00000000-0000-4000-8000-${i.toString().padStart(12, "0")}`))).toEqual([
        "enseignant_jeune",
      ]);
    expect(idx.entries.get("00000000-0000-4000-8000-000000200000")).toBeUndefined();
    expect(idx.groups).toEqual([{ entry: { tenant_id: T, names: ["enseignant_jeune"] }, records: 200_000 }]);
  });
});

describe("entryRoles: one entry, resolved by each bundle's names", () => {
  const withProfesseur = roleResolver([{ id: "enseignant_jeune", label: "Enseignant jeune", aliases: ["Professeur"] }]);

  it("the same shared entry resolves under names that know the alias and not under names that do not", () => {
    const idx = parseDirectory(
      JSON.stringify([{ sub: "a", tenant_id: T, roles: ["Professeur", "enseignant_jeune"] }]),
      "d.json",
    );
    const entry = idx.entries.get("a") as DirectoryEntry;
    expect(entryRoles(withProfesseur)(entry)).toEqual(["enseignant_jeune"]);
    expect(rolesOf(entry)).toBeUndefined();
    // Remembered per resolver: the same frozen answer every time.
    const byAlias = entryRoles(withProfesseur);
    expect(byAlias(entry)).toBe(byAlias(entry));
    expect(Object.isFrozen(byAlias(entry))).toBe(true);
  });

  it(
    "shares one entry per (tenant, names) and counts the records that use it (a later record for a sub replaces " +
      "the earlier)",
    () => {
      const idx = parseDirectory(
        JSON.stringify([
          { sub: "a", tenant_id: T, roles: ["Professeur"] },
          { sub: "b", tenant_id: T, roles: ["Professeur"] },
          { sub: "a", tenant_id: T, roles: ["enseignant_jeune"] },
          { sub: "c", tenant_id: T, roles: ["a", "b"] },
          { sub: "d", tenant_id: T, roles: ["a,b"] },
          { sub: "e", tenant_id: T, roles: ['["a","b"]'] },
        ]),
        "d.json",
      );
      expect(idx.groups.map((g) => [g.entry.names, g.records])).toEqual([
        [["Professeur"], 1],
        [["enseignant_jeune"], 1],
        [["a", "b"], 1],
        [["a,b"], 1],
        [['["a","b"]'], 1],
      ]);
      expect(idx.entries.get("b")).toBe(idx.groups[0]?.entry);
    },
  );
});

describe("Directory (file, watch, reload)", () => {
  it("reloads on change, keeps the old index on a broken file, and swaps in the next good one", async () => {
    const dir = mkdtempSync(join(tmpdir(), "portier-dir-"));
    const file = join(dir, "users.json");
    writeFileSync(file, JSON.stringify([{ sub: "a", tenant_id: T, roles: ["enseignant_jeune"] }]));
    const d = await Directory.open(file);
    opened.push(d);
    expect(roles(d.lookup("a"))).toEqual(["enseignant_jeune"]);

    writeFileSync(file, "[{ broken");
    await until(() => d.status().reloadFailures > 0);
    expect(d.lookup("a")).toBeDefined();
    expect(d.status().lastError).toContain("users.json");

    // Atomic replace (rename), as deploy tools do.
    writeFileSync(join(dir, "tmp"), JSON.stringify([{ sub: "b", tenant_id: T, roles: ["directeur_jeune"] }]));
    renameSync(join(dir, "tmp"), file);
    await until(() => d.lookup("b") !== undefined);
    expect(d.lookup("a")).toBeUndefined();
    expect(d.status().lastError).toBeUndefined();
    expect(d.size).toBe(1);
  });

  it("refuses to open a missing file", async () => {
    await expect(Directory.open("/nonexistent/users.json", { watch: false })).rejects.toThrow(
      /^not found: \/nonexistent\/users.json/,
    );
  });

  it(
    "checkRoles counts the records a bundle's names " + "cannot resolve, logs them, and lists a problem above half",
    async () => {
      const file = join(mkdtempSync(join(tmpdir(), "portier-dir-")), "users.json");
      const records = [
        ...Array.from({ length: 3 }, (_, i) => ({ sub: `p${i}`, tenant_id: T, roles: ["Professeur"] })),
        { sub: "x", tenant_id: T, roles: ["enseignant_jeune"] },
      ];
      writeFileSync(file, JSON.stringify(records));
      const warnings: Record<string, unknown>[] = [];
      const d = await Directory.open(file, {
        watch: false,
        logger: { warn: (o) => warnings.push(o as Record<string, unknown>) },
      });
      opened.push(d);
      expect(d.status().rolesUnresolved).toBe(0);

      d.checkRoles(entryRoles(withAlias), "alias");
      expect(d.status()).toMatchObject({ rolesUnresolved: 0 });
      expect(d.status().rolesProblem).toBeUndefined();
      expect(warnings).toEqual([]);

      d.checkRoles(rolesOf, "plain");
      expect(d.status().rolesUnresolved).toBe(3);
      expect(d.status().rolesProblem).toBe(
        "3 of 4 records (75%) name a role that bundle plain does not know; those users are not synced",
      );
      expect(warnings).toEqual([
        expect.objectContaining({
          event: "directory_roles_unresolved",
          revision: "plain",
          records: 4,
          unresolved: 3,
          share: "75%",
          examples: ['["Professeur"]: 3'],
        }),
      ]);

      // A reloaded file is checked against the live bundle's names too.
      writeFileSync(
        file,
        JSON.stringify([
          ...records,
          { sub: "y", tenant_id: T, roles: ["enseignant_jeune"] },
          { sub: "z", tenant_id: T, roles: ["enseignant_jeune"] },
        ]),
      );
      expect(await d.reload()).toBe(true);
      expect(d.status().rolesUnresolved).toBe(3);
      expect(d.status().rolesProblem).toBeUndefined();
    },
  );
});

const withAlias = roleResolver([{ id: "enseignant_jeune", label: "Enseignant jeune", aliases: ["Professeur"] }]);
