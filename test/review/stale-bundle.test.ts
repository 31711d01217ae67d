/**
 * Staleness by content: a bundle in a project's build/ folder is compared with the sources by digest (its
 * revision against the sources' own), in every review command alike. Sources rewritten with identical bytes
 * (a checkout that restored them: new modification times) are not stale; a changed policy or data file is
 * refused with one line naming the fix (exit 2); a bundle elsewhere is not compared with anything.
 */
import { copyFileSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { refuseStaleBundle, StaleBundleError } from "../../src/review/index.js";
import { loadEngine } from "../../src/engine/index.js";
import { portierInProcess as portier, scratchProject } from "../support/cli.js";
import { applicationDecisionLine } from "../support/decision-log.js";

let dir: string;
let bundle: string;

/** Every review command that reads a bundle, given this one. */
const readers = (file: string, log: string): string[][] => [
  ["matrix", "--bundle", file],
  ["explain", "--bundle", file, "--flow", "application", "GET", "/v1/roles"],
  ["diff", file, file],
  ["replay", "--log", log, "--bundle", file],
];

/** One replayable decision, so that replay's own evidence rule is not what answers. */
function decisionLog(): string {
  const file = join(dir, "decisions.log");
  writeFileSync(file, applicationDecisionLine(true, "allowed") + "\n");
  return file;
}

beforeEach(async () => {
  dir = scratchProject();
  bundle = join(dir, "build", "bundle.tar.gz");
  const built = await portier(["bundle", "build", "--project", dir]);
  expect(built.code).toBe(0);
}, 60_000);

describe("a project's build/bundle.tar.gz", () => {
  it("is not stale after its sources were rewritten with the same bytes and newer times", async () => {
    const future = new Date(Date.now() + 3_600_000);
    for (const file of ["policies/portier/decision.rego", "data/routes.json", "data/roles.json"]) {
      const path = join(dir, file);
      writeFileSync(path, readFileSync(path));
      utimesSync(path, future, future);
    }
    const log = decisionLog();
    for (const args of readers(bundle, log)) {
      const r = await portier(args);
      expect(r.stderr, args[0]).toBe("");
      expect(r.code, args[0]).toBe(0);
    }
  }, 60_000);

  it("is refused by every command, alike, once a source changed (exit 2, one line naming the fix)", async () => {
    const routes = join(dir, "data", "routes.json");
    writeFileSync(routes, readFileSync(routes, "utf8").replace('"eleve_adulte"]', '"eleve_adulte", "eleve_jeune"]'));
    // An older bundle, so that only content can tell: its file time says it is newer than every source.
    const future = new Date(Date.now() + 3_600_000);
    utimesSync(bundle, future, future);
    const log = decisionLog();
    const lines = new Set<string>();
    for (const args of readers(bundle, log)) {
      const r = await portier(args);
      expect(r.code, args[0]).toBe(2);
      expect(r.stdout, args[0]).toBe("");
      lines.add(r.stderr.replace(/^portier( \w+)?: /, ""));
    }
    expect([...lines]).toHaveLength(1);
    expect([...lines][0]).toMatch(
      new RegExp(
        String.raw`build/bundle\.tar\.gz is stale: built from revision \w{12}, ` +
          String.raw`but policies/ and data/ are now revision \w{12}; ` +
          String.raw`run \x60portier bundle build --project \S+\x60, or pass --source \S+ to read the sources\n$`,
      ),
    );
    // The sources themselves are read with --source.
    const fromSource = await portier(["matrix", "--source", dir]);
    expect(fromSource.code).toBe(0);
  }, 120_000);

  it("a change to a policy test alone leaves it fresh (the bundle does not carry the tests)", async () => {
    const test = join(dir, "policies", "portier", "catalog", "catalog_test.rego");
    writeFileSync(test, readFileSync(test, "utf8") + "\ntest_extra if true\n");
    expect((await portier(["matrix", "--bundle", bundle])).code).toBe(0);
    writeFileSync(join(dir, "policies", "portier", "decision.rego"), "package portier\n");
    const engine = await loadEngine(bundle);
    expect(() => refuseStaleBundle(bundle, engine.revision)).toThrow(StaleBundleError);
  }, 60_000);

  it("is refused when the sources no longer load: staleness cannot be told", async () => {
    writeFileSync(join(dir, "data", "roles.json"), "{");
    const r = await portier(["matrix", "--bundle", bundle]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /bundle\.tar\.gz: cannot tell whether it is up to date, the sources do not load: .*roles\.json/,
    );
  }, 60_000);

  it("a copy outside a build/ folder is read as it is", async () => {
    writeFileSync(join(dir, "data", "roles.json"), "{");
    mkdirSync(join(dir, "elsewhere"));
    const copy = join(dir, "elsewhere", "bundle.tar.gz");
    copyFileSync(bundle, copy);
    expect((await portier(["matrix", "--bundle", copy])).code).toBe(0);
  }, 60_000);
});
