/**
 * tools/check-line-length.ts: which lines are over the bar (strings and comments included), and the exit codes.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkTree, longLines } from "../../tools/check-line-length.js";
import { tempDir } from "../service/helpers.js";

describe("longLines", () => {
  it("counts code points, not UTF-16 units, and takes exactly the bar", () => {
    expect(longLines("x".repeat(120), "f.ts", 120)).toEqual([]);
    expect(longLines("x".repeat(121), "f.ts", 120)).toEqual([{ path: "f.ts", line: 1, characters: 121 }]);
    expect(longLines("😀".repeat(120), "f.ts", 120)).toEqual([]);
  });

  it("counts strings and comments, and numbers lines from 1 (CRLF too)", () => {
    const text = `const a = 1;\r\n// ${"c".repeat(130)}\nconst s = "${"s".repeat(120)}";\n`;
    expect(longLines(text, "f.ts", 120)).toEqual([
      { path: "f.ts", line: 2, characters: 133 },
      { path: "f.ts", line: 3, characters: 133 },
    ]);
  });
});

describe("check-line-length, the command", () => {
  const tree = (long: boolean) => {
    const root = join(tempDir(), "src");
    mkdirSync(join(root, "a"), { recursive: true });
    writeFileSync(join(root, "short.ts"), "export const short = 1;\n");
    writeFileSync(join(root, "notes.md"), `${"m".repeat(200)}\n`);
    const body = long ? `export const long = "${"x".repeat(120)}";\n` : "export const fine = 2;\n";
    writeFileSync(join(root, "a", "long.ts"), `// header\n${body}`);
    return root;
  };
  const run = (...args: string[]) =>
    spawnSync(
      process.execPath,
      ["--import", "tsx", join(import.meta.dirname, "..", "..", "tools", "check-line-length.ts"), ...args],
      { encoding: "utf8" },
    );

  it("finds the long line of a .ts file in a sub-folder, leaving other files out", () => {
    const root = tree(true);
    expect(checkTree(root, 120)).toEqual([{ path: join(root, "a", "long.ts"), line: 2, characters: 143 }]);
  });

  it("reads .mjs scripts too (the benchmarks' plain-JavaScript helpers)", () => {
    const root = tree(false);
    writeFileSync(join(root, "a", "load.mjs"), `const s = "${"y".repeat(120)}";\n`);
    expect(checkTree(root, 120)).toEqual([{ path: join(root, "a", "load.mjs"), line: 1, characters: 133 }]);
  });

  it("lists each long line as path:line: N characters and exits 1", () => {
    const root = tree(true);
    const r = run("--root", root);
    expect(r.status, r.stderr).toBe(1);
    expect(r.stdout).toBe(`${join(root, "a", "long.ts")}:2: 143 characters\n`);
    expect(r.stderr).toContain("1 line(s)");
  });

  it("exits 0 and prints nothing when every line is within the bar", () => {
    const r = run("--root", tree(false));
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).toBe("");
  });

  it("takes --max, and refuses a bad one with exit 2", () => {
    expect(run("--root", tree(true), "--max", "143").status).toBe(0);
    const r = run("--root", tree(true), "--max", "ten");
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--max: expected a whole number >= 1, got "ten"');
  });
});
