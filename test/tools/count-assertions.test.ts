/**
 * tools/count-assertions.ts: what counts as a type assertion (by syntax tree), and the bar it fails above.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { countAssertions, countTree } from "../../tools/count-assertions.js";
import { tempDir } from "../service/helpers.js";

describe("countAssertions", () => {
  it.each([
    ["x as string", { as: 1, asUnknownAs: 0, nonNull: 0 }],
    ["<string>x", { as: 1, asUnknownAs: 0, nonNull: 0 }],
    ["[1, 2] as const", { as: 0, asUnknownAs: 0, nonNull: 0 }],
    ["x as unknown as Foo", { as: 1, asUnknownAs: 1, nonNull: 0 }],
    ["(x as unknown) as Foo", { as: 1, asUnknownAs: 1, nonNull: 0 }],
    ["x as unknown", { as: 1, asUnknownAs: 0, nonNull: 0 }],
    ["a!.b!", { as: 0, asUnknownAs: 0, nonNull: 2 }],
    ["a !== b", { as: 0, asUnknownAs: 0, nonNull: 0 }],
    ["// x as string\nconst s = 'y as string'", { as: 0, asUnknownAs: 0, nonNull: 0 }],
    ["f((x as A).b as B)", { as: 2, asUnknownAs: 0, nonNull: 0 }],
    ["const o = { a: 1 } satisfies Record<string, number>", { as: 0, asUnknownAs: 0, nonNull: 0 }],
  ])("%s", (code, expected) => {
    expect(countAssertions(`${code};\n`)).toEqual({ lines: code.split("\n").length, ...expected });
  });
});

describe("count-assertions, the command", () => {
  const tree = () => {
    const root = join(tempDir(), "src");
    mkdirSync(join(root, "a"), { recursive: true });
    mkdirSync(join(root, "b"), { recursive: true });
    // a: 2 `as` and 1 `!` in 4 lines; b: 0 in 6 lines; 10 lines in all: 200 `as` per 1,000 lines.
    writeFileSync(
      join(root, "a", "one.ts"),
      "const x = y as string;\nconst z = w!;\nconst v = u as number;\nexport {};\n",
    );
    writeFileSync(join(root, "b", "two.ts"), "export const a = 1;\n".repeat(6));
    writeFileSync(join(root, "b", "types.d.ts"), "declare const q: unknown;\nexport const r = q as string;\n");
    return root;
  };
  const run = (...args: string[]) =>
    spawnSync(
      process.execPath,
      ["--import", "tsx", join(import.meta.dirname, "..", "..", "tools", "count-assertions.ts"), ...args],
      { encoding: "utf8" },
    );

  it("counts per top-level folder, .d.ts files left out", () => {
    const { folders, total } = countTree(tree());
    expect(Object.fromEntries(folders)).toEqual({
      a: { lines: 4, as: 2, asUnknownAs: 0, nonNull: 1 },
      b: { lines: 6, as: 0, asUnknownAs: 0, nonNull: 0 },
    });
    expect(total).toEqual({ lines: 10, as: 2, asUnknownAs: 0, nonNull: 1 });
  });

  it.each([
    [["--max-as-per-kloc", "200"], 0, ""],
    [["--max-as-per-kloc", "199"], 1, "2 `as` assertions in"],
    [["--max-non-null-per-kloc", "99"], 1, "1 non-null assertions in"],
    [["--max-as-per-kloc", "ten"], 2, '--max-as-per-kloc: expected a number >= 0, got "ten"'],
  ])("%j exits %i", (args, code, stderr) => {
    const r = run("--root", tree(), ...args);
    expect(r.status, r.stderr).toBe(code);
    if (stderr) expect(r.stderr).toContain(stderr);
    else expect(r.stderr).toBe("");
    if (code !== 2) expect(r.stdout).toMatch(/^total +10 +2 +200\.0 +0 +1 +100\.0$/m);
  });
});
