/**
 * The synced-users directory: JSON and NDJSON, role labels/aliases mapped to ids, unknown roles reported,
 * reload on change with a broken file keeping the old index, and 200,000 records all found.
 */
import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync, renameSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Directory, DirectoryLoadError, loadRoleResolver, parseDirectory } from "../../src/directory/index.js";

const ROLES = fileURLToPath(new URL("../../data/roles.json", import.meta.url));
const resolve = loadRoleResolver(ROLES);
const T = "3f7c1a52-8d1e-4b7a-9c3e-5a2b6d8e9f01";
const opened: Directory[] = [];
afterEach(() => opened.splice(0).forEach((d) => d.close()));

async function until(check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 50));
  }
}

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
    ].join("\n");
    const idx = parseDirectory(text, "d.ndjson", resolve);
    expect(["a", "b", "c"].filter((s) => idx.entries.get(s))).toEqual(["a"]);
    expect(idx.entries.size).toBe(1);
    expect(idx.rejected).toBe(2);
    expect(idx.problems[0]).toBe('d.ndjson line 3: unknown role "astronaute"');
    expect(idx.problems[1]).toContain("line 4: tenant_id");
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
    const d = await Directory.open(file, ROLES);
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
    await expect(Directory.open("/nonexistent/users.json", ROLES, { watch: false })).rejects.toThrow(/cannot read/);
  });
});
