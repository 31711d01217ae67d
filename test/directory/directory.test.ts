/**
 * The synced-users directory: JSON and NDJSON, role labels/aliases mapped to ids, unknown roles reported,
 * reload on change with a broken file keeping the old index, re-resolution for new role names (a new
 * bundle's catalog), and 200,000 records all found.
 */
import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync, renameSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Directory, DirectoryLoadError, loadRoleResolver, parseDirectory, roleResolver } from "../../src/directory/index.js";
import { TENANT_A } from "../support/sample.js";
import { until } from "../support/until.js";

const ROLES = fileURLToPath(new URL("../../data/roles.json", import.meta.url));
const resolve = loadRoleResolver(ROLES);
const T = TENANT_A;
const opened: Directory[] = [];
afterEach(() => opened.splice(0).forEach((d) => d.close()));

describe("parseDirectory", () => {
  it("reads a JSON array and maps labels and aliases to role ids", () => {
    const idx = parseDirectory(
      JSON.stringify([
        { sub: "a", tenant_id: T, roles: ["enseignant_jeune"] },
        { sub: "b", tenant_id: T, roles: ["Parent de l'élève jeune", "ÉLÈVE ADULTE"] },
      ]),
      "dir.json",
      resolve,
    );
    expect(idx.entries.get("a")).toEqual({ tenant_id: T, roles: ["enseignant_jeune"] });
    expect(idx.entries.get("b")?.roles).toEqual(["parent_eleve_jeune", "eleve_adulte"]);
    expect(idx.rejected).toBe(0);
  });

  it("reads NDJSON and reports records with unknown roles or bad shapes by line, without keeping them", () => {
    const text = [
      JSON.stringify({ sub: "a", tenant_id: T, roles: ["directeur_jeune"] }),
      "",
      JSON.stringify({ sub: "b", tenant_id: T, roles: ["astronaute"] }),
      JSON.stringify({ sub: "c", roles: [] }),
      JSON.stringify({ sub: "d", tenant_id: T, roles: "directeur_jeune" }),
    ].join("\n");
    const idx = parseDirectory(text, "d.ndjson", resolve);
    expect(["a", "b", "c", "d"].filter((s) => idx.entries.get(s))).toEqual(["a"]);
    expect(idx.entries.size).toBe(1);
    expect(idx.rejected).toBe(3);
    expect(idx.problems[0]).toBe('d.ndjson line 3: unknown role "astronaute"');
    expect(idx.problems[1]).toContain("line 4: tenant_id");
    expect(idx.problems[2]).toBe("d.ndjson line 5: roles must be an array");
  });

  it("refuses malformed JSON with the file and line", () => {
    expect(() => parseDirectory("[{", "x.json", resolve)).toThrow(DirectoryLoadError);
    expect(() => parseDirectory('{"sub":"a","tenant_id":"t","roles":[]}\n{oops', "x.ndjson", resolve)).toThrow(/x\.ndjson:2/);
  });

  it("indexes 200,000 records and finds each one (speed is measured in make bench)", () => {
    const lines: string[] = [];
    for (let i = 0; i < 200_000; i++) lines.push(`{"sub":"00000000-0000-4000-8000-${i.toString().padStart(12, "0")}","tenant_id":"${T}","roles":["enseignant_jeune"]}`);
    const idx = parseDirectory(lines.join("\n"), "big.ndjson", resolve);
    expect(idx.entries.size).toBe(200_000);
    for (let i = 0; i < 200_000; i += 997) expect(idx.entries.get(`00000000-0000-4000-8000-${i.toString().padStart(12, "0")}`)?.roles).toEqual(["enseignant_jeune"]);
    expect(idx.entries.get("00000000-0000-4000-8000-000000200000")).toBeUndefined();
  });
});

describe("Directory (file, watch, reload)", () => {
  it("reloads on change, keeps the old index on a broken file, and swaps in the next good one", async () => {
    const dir = mkdtempSync(join(tmpdir(), "portier-dir-"));
    const file = join(dir, "users.json");
    writeFileSync(file, JSON.stringify([{ sub: "a", tenant_id: T, roles: ["enseignant_jeune"] }]));
    const d = await Directory.open(file, resolve);
    opened.push(d);
    expect(d.lookup("a")?.roles).toEqual(["enseignant_jeune"]);

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
    await expect(Directory.open("/nonexistent/users.json", resolve, { watch: false })).rejects.toThrow(/cannot read/);
  });

  it("prepareRoles loads with new role names but swaps only when committed; a broken file then keeps the index", async () => {
    const dir = mkdtempSync(join(tmpdir(), "portier-dir-"));
    const file = join(dir, "users.json");
    writeFileSync(file, JSON.stringify([{ sub: "a", tenant_id: T, roles: ["Professeur"] }]));
    // Every record names a role these names do not know yet: the guard is tested in reload-guards.test.ts.
    const d = await Directory.open(file, resolve, { watch: false, allowShrink: true });
    opened.push(d);
    expect(d.lookup("a")).toBeUndefined();
    const withProfesseur = roleResolver([{ id: "enseignant_jeune", label: "Enseignant jeune", aliases: ["Professeur"] }]);
    const commit = await d.prepareRoles(withProfesseur);
    expect(d.lookup("a")).toBeUndefined();
    commit();
    expect(d.lookup("a")?.roles).toEqual(["enseignant_jeune"]);

    // Prepared, then a newer file lands before the commit: the commit reloads it with the new names.
    const back = await d.prepareRoles(resolve);
    writeFileSync(file, JSON.stringify([{ sub: "b", tenant_id: T, roles: ["Enseignant jeune"] }, { sub: "c", tenant_id: T, roles: ["Professeur"] }]));
    await d.reload();
    expect(d.lookup("c")?.roles).toEqual(["enseignant_jeune"]);
    back();
    await until(() => d.lookup("c") === undefined);
    expect(d.lookup("b")?.roles).toEqual(["enseignant_jeune"]);
    expect(d.status().rejected).toBe(1);

    // The file cannot be parsed when prepared: the names swap, the index stays, the failure is reported,
    // and the next load uses the new names.
    writeFileSync(file, "[{ broken");
    const again = await d.prepareRoles(withProfesseur);
    again();
    await until(() => d.status().reloadFailures > 0);
    expect(d.status().lastError).toContain("users.json");
    expect(d.status().rejected).toBe(1);
    writeFileSync(file, JSON.stringify([{ sub: "d", tenant_id: T, roles: ["professeur"] }]));
    await d.reload();
    expect(d.lookup("d")?.roles).toEqual(["enseignant_jeune"]);
  });

  it("a reload that started with the old role names and ends after the swap loads again with the new ones", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "portier-dir-")), "users.json");
    writeFileSync(file, JSON.stringify([{ sub: "a", tenant_id: T, roles: ["Professeur"] }]));
    // Every record names a role these names do not know yet: the guard is tested in reload-guards.test.ts.
    const d = await Directory.open(file, resolve, { watch: false, allowShrink: true });
    opened.push(d);
    const commit = await d.prepareRoles(roleResolver([{ id: "enseignant_jeune", label: "Enseignant jeune", aliases: ["Professeur"] }]));
    const pending = d.reload();
    commit();
    expect(await pending).toBe(true);
    expect(d.lookup("a")?.roles).toEqual(["enseignant_jeune"]);
  });
});
