/**
 * The directory refuses reloads that would silently take access away: an empty file, `{}`, whitespace, or
 * records that are all invalid (also at start), a reload that drops more than --directory-max-shrink of the
 * records, and a series of smaller drops from the largest count accepted within the shrink window, unless
 * the operator allows it. The old index keeps serving and the refusal is reported. With a bundle's names, the
 * guards count the records those names resolve: a feed that turns users into unknown-role records shrinks.
 */
import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  Directory,
  entryRoles,
  loadRoleResolver,
  roleResolver,
  type BundleNames,
  type DirectoryOptions,
} from "../../src/directory/index.js";
import { TENANT_A } from "../support/sample.js";
import { sealNdjson } from "../support/directory-files.js";
const T = TENANT_A;
const opened: Directory[] = [];
afterEach(() => opened.splice(0).forEach((d) => d.close()));

const users = (n: number, prefix = "u") =>
  Array.from({ length: n }, (_, i) => ({ sub: `${prefix}${i}`, tenant_id: T, roles: ["enseignant_jeune"] }));

/** Writes as feeds should: a temp file renamed over the old one. */
function replace(file: string, text: string): void {
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
}

async function openWith(records: unknown[], options: DirectoryOptions = {}) {
  const file = join(mkdtempSync(join(tmpdir(), "portier-dirguard-")), "users.json");
  writeFileSync(file, JSON.stringify(records));
  const d = await Directory.open(file, { watch: false, ...options });
  opened.push(d);
  return { d, file };
}

const EMPTY: [string, string, RegExp][] = [
  ["an empty file, sealed", sealNdjson([]), /the file has no record/],
  ["whitespace only, sealed", sealNdjson(["  ", "", "\t "]), /the file has no record/],
  ["{}, sealed", sealNdjson(["{}"]), /all 1 records are invalid/],
  ["an empty array", "[]", /the file has no record/],
  [
    "records that are all invalid",
    JSON.stringify([{ sub: "x", tenant_id: T, roles: [7] }, { sub: "y" }]),
    /all 2 records are invalid/,
  ],
];

const UNSEALED: [string, string][] = [
  ["an empty file", ""],
  ["whitespace only", "  \n\n\t \n"],
  ["{}", "{}"],
];

describe("an NDJSON file without its end record is refused as incomplete, whatever it holds", () => {
  for (const [name, text] of UNSEALED) {
    it(name, async () => {
      const { d, file } = await openWith(users(3));
      replace(file, text);
      expect(await d.reload()).toBe(false);
      expect(d.size).toBe(3);
      expect(d.status().lastError).toMatch(
        /users\.json: the NDJSON directory has no end record \(a feed still being written\?\)/,
      );
    });
  }
});

describe("a reload with no valid record is refused and the old index kept", () => {
  for (const [name, text, why] of EMPTY) {
    it(name, async () => {
      const { d, file } = await openWith(users(3));
      replace(file, text);
      expect(await d.reload()).toBe(false);
      expect(d.size).toBe(3);
      expect(d.lookup("u0")?.names).toEqual(["enseignant_jeune"]);
      expect(d.status().lastError).toMatch(why);
      expect(d.status().lastError).toContain("--allow-directory-shrink");
      expect(d.status().reloadFailures).toBe(1);
    });
  }

  it("is refused at start too, naming the reason", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "portier-dirguard-")), "users.json");
    writeFileSync(file, sealNdjson(["{}"]));
    await expect(Directory.open(file, { watch: false })).rejects.toThrow(/all 1 records are invalid/);
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
      else
        expect(d.status().lastError).toMatch(
          new RegExp(`drops \\d+% of the records \\(${c.from} -> ${c.to}\\).*--directory-max-shrink`),
        );
    });
  }

  it("allowShrink accepts an empty directory too", async () => {
    const { d, file } = await openWith(users(3), { allowShrink: true });
    replace(file, sealNdjson([]));
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

describe("slow ratchet: the guard compares with the largest count accepted within the window", () => {
  /** A directory on a clock the test moves. */
  async function onClock(from: number, options: DirectoryOptions = {}) {
    let now = 1_000_000;
    const opened = await openWith(users(from), { now: () => now, ...options });
    const step = async (n: number, advanceMs = 1000) => {
      now += advanceMs;
      replace(opened.file, JSON.stringify(users(n, `s${n}-`)));
      return opened.d.reload();
    };
    return { ...opened, step };
  }

  it("10 -> 7 -> 5 -> 4 -> 1: each step drops at most 50% of the one before, the series is stopped at 4", async () => {
    const { d, step } = await onClock(10);
    expect(await step(7)).toBe(true);
    expect(await step(5)).toBe(true);
    expect(await step(4)).toBe(false);
    expect(d.size).toBe(5);
    expect(d.status().lastError).toMatch(
      new RegExp(
        String.raw`drops 60% of the records \(10, the largest accepted in the last 86400 s \(now 5\), -> ` +
          String.raw`4\).*--directory-max-shrink`,
      ),
    );
    expect(await step(1)).toBe(false);
    expect(d.size).toBe(5);
  });

  it("the mark decays after the window: the same step is accepted once the largest count is older", async () => {
    const { d, step } = await onClock(10, { shrinkWindowMs: 60_000 });
    expect(await step(5, 1000)).toBe(true);
    expect(await step(4, 1000)).toBe(false);
    // 10 was accepted more than 60 s ago: the reference is now 5 (the current index).
    expect(await step(4, 60_000)).toBe(true);
    expect(d.size).toBe(4);
  });

  it("a window of 0 compares with the current index only (the former behaviour)", async () => {
    const { step } = await onClock(10, { shrinkWindowMs: 0 });
    for (const n of [7, 5, 4, 2, 1]) expect(await step(n)).toBe(true);
  });

  it("growth raises the mark: 4 -> 10 -> 5 is fine, then 4 is refused", async () => {
    const { step } = await onClock(4);
    expect(await step(10)).toBe(true);
    expect(await step(5)).toBe(true);
    expect(await step(4)).toBe(false);
  });

  it("allowShrink accepts the purge and resets the mark to the purged size", async () => {
    const { d, step } = await onClock(10, { allowShrink: true });
    expect(await step(1)).toBe(true);
    expect(d.size).toBe(1);
    expect(await step(1)).toBe(true);
  });
});

describe("the guards count the records the live bundle's names resolve (what decisions see)", () => {
  const ROLES = fileURLToPath(new URL("../../data/roles.json", import.meta.url));
  const spec: BundleNames = { resolve: entryRoles(loadRoleResolver(ROLES)), bundle: "spec" };
  const unknown = (n: number, prefix = "x") =>
    Array.from({ length: n }, (_, i) => ({ sub: `${prefix}${i}`, tenant_id: T, roles: ["astronaute"] }));

  it("4 valid records kept, 6 turned into unknown-role ones: refused, the old index serves", async () => {
    const { d, file } = await openWith(users(10), { roles: spec });
    replace(file, JSON.stringify([...users(4), ...unknown(6, "u1")]));
    expect(await d.reload()).toBe(false);
    expect(d.lookup("u9")?.names).toEqual(["enseignant_jeune"]);
    expect(d.status()).toMatchObject({ size: 10, rolesUnresolved: 0, rolesBundle: "spec" });
    expect(d.status().lastError).toBe(
      "refused: the reload drops 60% of the records (10 -> 4; 6 of the file's 10 records name a role that bundle " +
        "spec does not know), more than the 50% allowed by --directory-max-shrink " +
        "(allow it with --allow-directory-shrink)",
    );
    // Half of them resolvable is within the limit.
    replace(file, JSON.stringify([...users(5), ...unknown(5)]));
    expect(await d.reload()).toBe(true);
    expect(d.status()).toMatchObject({ size: 10, rolesUnresolved: 5 });
  });

  it("at start, a directory whose every record names only unknown roles is refused", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "portier-dirguard-")), "users.json");
    writeFileSync(file, JSON.stringify(unknown(3)));
    await expect(Directory.open(file, { watch: false, roles: spec })).rejects.toThrow(
      "refused: all 3 records name a role that bundle spec does not know; no user would be synced " +
        "(allow it with --allow-directory-shrink)",
    );
    // Without a bundle's names nothing is unknown yet: every record counts.
    const d = await Directory.open(file, { watch: false });
    opened.push(d);
    expect(d.size).toBe(3);
  });

  it("a reload turning every record into an unknown-role one is refused like an empty file", async () => {
    const { d, file } = await openWith(users(3), { roles: spec });
    replace(file, JSON.stringify(unknown(3)));
    expect(await d.reload()).toBe(false);
    expect(d.status().lastError).toMatch(/^refused: all 3 records name a role that bundle spec does not know/);
    expect(d.lookup("u0")?.names).toEqual(["enseignant_jeune"]);
  });

  it("the window counts usable records too: 10 -> 7 usable -> 4 usable is refused", async () => {
    const { d, file } = await openWith(users(10), { roles: spec });
    replace(file, JSON.stringify([...users(7), ...unknown(3)]));
    expect(await d.reload()).toBe(true);
    replace(file, JSON.stringify([...users(4), ...unknown(6)]));
    expect(await d.reload()).toBe(false);
    expect(d.status().lastError).toMatch(/drops 60% of the records \(10, the largest accepted .* \(now 7\), -> 4;/);
  });

  it("a bundle that revokes names goes live, is counted, and lowers the reference by what it revoked", async () => {
    // Under `alias`, "Professeur" is enseignant_jeune; under `spec` it is no role: 6 of 10 records revoked.
    const alias: BundleNames = {
      resolve: entryRoles(
        roleResolver([{ id: "enseignant_jeune", label: "Enseignant jeune", aliases: ["Professeur"] }]),
      ),
      bundle: "alias",
    };
    const records = [...users(4), ...users(6, "p").map((r) => ({ ...r, roles: ["Professeur"] }))];
    const { d, file } = await openWith(records, { roles: alias });
    expect(d.status()).toMatchObject({ rolesUnresolved: 0, rolesBundle: "alias" });
    d.checkRoles(spec.resolve, spec.bundle);
    expect(d.status()).toMatchObject({ size: 10, rolesUnresolved: 6, rolesBundle: "spec" });
    // The same feed again, and one more user: compared with the 4 the live bundle resolves, not the 10 of before.
    replace(file, JSON.stringify([...records, ...users(1, "n")]));
    expect(await d.reload()).toBe(true);
    expect(d.status()).toMatchObject({ size: 11, rolesUnresolved: 6 });
    // A shrink from there is still refused.
    replace(file, JSON.stringify([...users(2), ...users(6, "p").map((r) => ({ ...r, roles: ["Professeur"] }))]));
    expect(await d.reload()).toBe(false);
    expect(d.status().lastError).toMatch(/drops 60% of the records \(5 -> 2; 6 of the file's 8 records/);
  });

  it("after a reload the unknown-role count is taken afresh from the new index", async () => {
    const { d, file } = await openWith([...users(4), ...unknown(3)], { roles: spec });
    expect(d.status().rolesUnresolved).toBe(3);
    replace(file, JSON.stringify([...users(4), ...unknown(1)]));
    expect(await d.reload()).toBe(true);
    expect(d.status().rolesUnresolved).toBe(1);
    replace(file, JSON.stringify([...users(4), ...unknown(2)]));
    expect(await d.reload()).toBe(true);
    expect(d.status().rolesUnresolved).toBe(2);
  });
});
