/**
 * The first mistake of a new user gets one line in words: `--role` takes a role as the matrix shows it (its
 * label) as well as its id, a mistyped role gets the nearest known name, and a missing file is "not found:
 * PATH" in every command, never a raw ENOENT nor a git error. (Mistyped commands and options: help.test.ts;
 * data/ mistakes: test/catalog/load-catalog.test.ts.)
 */
import { join } from "node:path";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { portierInProcess as portier, portierProcess } from "../support/cli.js";
import { requireBundle } from "../support/bundle.js";

type Explained = { decision: { allow: boolean }; request?: unknown };

describe("explain --role", () => {
  it("accepts a role as the matrix shows it, a label with accents, as its id", async () => {
    const byLabel = await portier(["explain", "--json", "--role", "Élève jeune", "GET", "/v1/roles"]);
    const byId = await portier(["explain", "--json", "--role", "eleve_jeune", "GET", "/v1/roles"]);
    expect(byLabel.code).toBe(0);
    expect((JSON.parse(byLabel.stdout) as Explained).decision).toEqual((JSON.parse(byId.stdout) as Explained).decision);
    const text = await portier(["explain", "--role", "Parent de l'élève jeune", "GET", "/v1/roles"]);
    expect(text.stdout).toMatch(/^\w+ GET \/v1\/roles for a user token with role\(s\) \[parent_eleve_jeune\]$/m);
  });

  it("names the nearest known role for a mistyped one, in one line, exit 2", async () => {
    const r = await portierProcess(["explain", "--role", "enseignant_jeun", "GET", "/v1/roles"]);
    expect(r).toMatchObject({
      code: 2,
      stdout: "",
      stderr:
        'portier: --role: unknown role "enseignant_jeun" (did you mean "enseignant_jeune"?); portier explain ' +
        "--help lists the options\n",
    });
    const label = await portier(["explain", "--role", "Eleve adulte", "GET", "/v1/roles"]);
    expect(label.stderr).toMatch(/unknown role "Eleve adulte" \(did you mean "(eleve_adulte|Élève adulte)"\?\)/);
  }, 60_000);
});

describe("a file that is not a regular file is named as such, never read (/dev/zero never ends)", () => {
  const cases: [string, string[], string][] = [
    ["explain --input", ["explain", "--input", "/dev/zero"], "--input: "],
    ["explain --bundle", ["explain", "--bundle", "/dev/zero", "GET", "/v1/roles"], ""],
    ["matrix --bundle", ["matrix", "--bundle", "/dev/zero"], ""],
    ["replay --log", ["replay", "--log", "/dev/zero", "--bundle", requireBundle()], "--log: "],
    ["bundle sign --signing-key", ["bundle", "sign", "--signing-key", "/dev/zero", requireBundle()], "--signing-key: "],
    ["bundle sign BUNDLE", ["bundle", "sign", "--signing-key", requireBundle(), "/dev/zero"], "sign: "],
    ["directory seal", ["directory", "seal", "/dev/zero"], ""],
  ];
  it.each(cases)(
    "%s",
    async (_name, args, option) => {
      const r = await portier(args);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`${option}/dev/zero: not a regular file (a character device)`);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    },
    60_000,
  );
});

describe("a missing file is `not found: PATH`", () => {
  const none = join(mkdtempSync(join(tmpdir(), "portier-missing-")), "none");
  const cases: [string, string[]][] = [
    ["explain --input", ["explain", "--input", `${none}.json`]],
    ["explain --bundle", ["explain", "--bundle", `${none}.tar.gz`, "GET", "/v1/roles"]],
    ["matrix --bundle", ["matrix", "--bundle", `${none}.tar.gz`]],
    ["replay --log", ["replay", "--log", `${none}.log`, "--bundle", requireBundle()]],
    ["diff (neither file, folder nor git revision)", ["diff", `${none}.tar.gz`, requireBundle()]],
    ["data check --project", ["data", "check", "--project", none]],
    ["bundle sign", ["bundle", "sign", "--signing-key", `${none}.pem`, requireBundle()]],
    ["directory seal", ["directory", "seal", `${none}.ndjson`]],
  ];
  it.each(cases)(
    "%s",
    async (_name, args) => {
      const r = await portier(args);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`not found: ${none}`));
      expect(r.stderr).not.toMatch(/ENOENT|fatal:|no such file/i);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    },
    60_000,
  );
});
