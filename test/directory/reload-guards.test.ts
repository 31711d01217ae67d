/**
 * The directory refuses reloads that would silently take access away: an empty file, `{}`, whitespace, or
 * records that are all invalid (also at start), and a reload that drops more than --directory-max-shrink
 * of the records, unless the operator allows it. The old index keeps serving and the refusal is reported.
 */
import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadRoleResolver, Directory, type DirectoryOptions } from "../../src/directory/index.js";
import { TENANT_A } from "../support/sample.js";

const ROLES = fileURLToPath(new URL("../../data/roles.json", import.meta.url));
const T = TENANT_A;
const opened: Directory[] = [];
afterEach(() => opened.splice(0).forEach((d) => d.close()));

const users = (n: number, prefix = "u") => Array.from({ length: n }, (_, i) => ({ sub: `${prefix}${i}`, tenant_id: T, roles: ["enseignant_jeune"] }));

/** Writes as feeds should: a temp file renamed over the old one. */
function replace(file: string, text: string): void {
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
}

async function openWith(records: unknown[], options: DirectoryOptions = {}) {
  const file = join(mkdtempSync(join(tmpdir(), "portier-dirguard-")), "users.json");
  writeFileSync(file, JSON.stringify(records));
  const d = await Directory.open(file, loadRoleResolver(ROLES), { watch: false, ...options });
  opened.push(d);
  return { d, file };
}

const EMPTY: [string, string, RegExp][] = [
  ["an empty file", "", /the file has no record/],
  ["whitespace only", "  \n\n\t \n", /the file has no record/],
  ["{}", "{}", /all 1 records are invalid/],
  ["an empty array", "[]", /the file has no record/],
  ["records that are all invalid", JSON.stringify([{ sub: "x", tenant_id: T, roles: ["astronaute"] }, { sub: "y" }]), /all 2 records are invalid/],
];

describe("a reload with no valid record is refused and the old index kept", () => {
  for (const [name, text, why] of EMPTY) {
    it(name, async () => {
      const { d, file } = await openWith(users(3));
      replace(file, text);
      expect(await d.reload()).toBe(false);
      expect(d.size).toBe(3);
      expect(d.lookup("u0")?.roles).toEqual(["enseignant_jeune"]);
      expect(d.status().lastError).toMatch(why);
      expect(d.status().lastError).toContain("--allow-directory-shrink");
      expect(d.status().reloadFailures).toBe(1);
    });
  }

  it("is refused at start too, naming the reason", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "portier-dirguard-")), "users.json");
    writeFileSync(file, "{}");
    await expect(Directory.open(file, loadRoleResolver(ROLES), { watch: false })).rejects.toThrow(/all 1 records are invalid/);
  });
});

describe("shrink guard", () => {
  const cases: { name: string; from: number; to: number; options: DirectoryOptions; accepted: boolean }[] = [
    { name: "dropping half is allowed by default", from: 10, to: 5, options: {}, accepted: true },
    { name: "dropping more than half is refused by default", from: 10, to: 4, options: {}, accepted: false },
    { name: "a stricter limit refuses a smaller drop", from: 10, to: 8, options: { maxShrink: 0.1 }, accepted: false },
    { name: "a looser limit accepts a bigger drop", from: 10, to: 2, options: { maxShrink: 0.9 }, accepted: true },
    { name: "allowShrink accepts any drop", from: 10, to: 1, options: { allowShrink: true }, accepted: true },
    { name: "growing is always fine", from: 2, to: 10, options: { maxShrink: 0 }, accepted: true },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const { d, file } = await openWith(users(c.from), c.options);
      replace(file, JSON.stringify(users(c.to, "v")));
      expect(await d.reload()).toBe(c.accepted);
      expect(d.size).toBe(c.accepted ? c.to : c.from);
      if (c.accepted) expect(d.status().lastError).toBeUndefined();
      else expect(d.status().lastError).toMatch(new RegExp(`drops \\d+% of the records \\(${c.from} -> ${c.to}\\).*--directory-max-shrink`));
    });
  }

  it("allowShrink accepts an empty directory too", async () => {
    const { d, file } = await openWith(users(3), { allowShrink: true });
    replace(file, "");
    expect(await d.reload()).toBe(true);
    expect(d.size).toBe(0);
  });

  it("the watched file: a refused reload is reported, and a later good one clears it", async () => {
    const { d, file } = await openWith(users(4), { watch: true });
    replace(file, "{}");
    await expect.poll(() => d.status().reloadFailures, { timeout: 5000 }).toBe(1);
    expect(d.size).toBe(4);
    replace(file, JSON.stringify(users(4, "w")));
    await expect.poll(() => d.lookup("w0") !== undefined, { timeout: 5000 }).toBe(true);
    expect(d.status().lastError).toBeUndefined();
  });
});
