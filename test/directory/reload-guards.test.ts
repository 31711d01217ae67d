/**
 * The directory refuses reloads that would silently take access away: an empty file, `{}`, whitespace, or
 * records that are all invalid (also at start), a reload that drops more than --directory-max-shrink of the
 * records, and a series of smaller drops from the largest count accepted within the shrink window, unless
 * the operator allows it. The old index keeps serving and the refusal is reported.
 */
import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Directory, type DirectoryOptions } from "../../src/directory/index.js";
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
      /drops 60% of the records \(10, the largest accepted in the last 86400 s \(now 5\), -> 4\).*--directory-max-shrink/,
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
