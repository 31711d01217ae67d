/**
 * `portier review` of a project in a subfolder of its repository (services/orders/policy, made by `portier init` in
 * a git repository the test makes): both sides read that folder at their revision (its path from the top level),
 * from the repository's top folder or from the project's own, and every place the report names (md, json, SARIF,
 * workflow annotations, the place of an error) is named from the repository's top level, as a pull request's files
 * are. A revision without the folder is refused naming it.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { portierInProcess as portier, portierProcess } from "../support/cli.js";
import type { ReviewReport } from "../../src/review/index.js";

const SUB = "services/orders/policy";
let top: string;
let project: string;
const revs: Record<"empty" | "base" | "gain", string> = { empty: "", base: "", gain: "" };

const git = (...args: string[]) => execFileSync("git", ["-C", top, ...args], { encoding: "utf8" }).trim();
const commit = (message: string) => {
  git("add", "-A");
  git("-c", "user.name=t", "-c", "user.email=t@example.test", "commit", "-q", "-m", message);
  return git("rev-parse", "HEAD");
};
/** The line of data/routes.json that holds the history route's role list. */
const historyLine = () =>
  readFileSync(join(project, "data", "routes.json"), "utf8")
    .split("\n")
    .findIndex((l) => l.includes("/items/{itemId}/history")) + 1;

beforeAll(async () => {
  top = mkdtempSync(join(tmpdir(), "portier-subfolder-"));
  git("init", "-q");
  writeFileSync(join(top, "README.md"), "an application repository\n");
  revs.empty = commit("no policy project yet");
  project = join(top, SUB);
  mkdirSync(join(project, ".."), { recursive: true });
  expect((await portier(["init", project])).code).toBe(0);
  revs.base = commit("policy project");
  // Readers gain the item history, written on one line so the test knows the line.
  const file = join(project, "data", "routes.json");
  const doc = JSON.parse(readFileSync(file, "utf8")) as { routes: { template: string; allowed: string[] }[] };
  const history = doc.routes.find((r) => r.template === "/items/{itemId}/history")!;
  history.allowed = ["reader", "writer"];
  writeFileSync(file, `{\n  "routes": [\n${doc.routes.map((r) => `    ${JSON.stringify(r)}`).join(",\n")}\n  ]\n}\n`);
  expect((await portier(["init", "--tests", project])).code).toBe(0);
  revs.gain = commit("readers may read the history");
}, 180_000);

afterAll(() => rmSync(top, { recursive: true, force: true }));

describe("portier review of a project in a subfolder of its repository", () => {
  it("compares two revisions of the folder, naming the cause from the repository's top level", async () => {
    const r = await portier(["review", "--project", project, revs.base, revs.gain, "--format", "json"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as ReviewReport;
    expect(report.summary).toMatch(/^1 grant gained, 0 lost/);
    expect(report.rows).toHaveLength(1);
    expect(report.rows[0]).toMatchObject({
      change: "gained",
      role: "reader",
      causes: [{ file: `${SUB}/data/routes.json`, line: historyLine() }],
    });
    expect(report.tests).toMatchObject({ failed: [], coverage: 100 });
  }, 180_000);

  it("reads BASE at its revision from the project's folder, HEAD its working tree; SARIF agrees", async () => {
    const sarif = join(top, "review.sarif");
    const r = await portierProcess(["review", revs.base, "--output", sarif], {
      cwd: project,
      env: { GITHUB_ACTIONS: "true" },
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`\`${SUB}/data/routes.json:${historyLine()}\``);
    expect(r.stderr).toContain(`::warning file=${SUB}/data/routes.json,line=${historyLine()},title=`);
    const doc = JSON.parse(readFileSync(sarif, "utf8")) as {
      runs: { results: { locations: { physicalLocation: { artifactLocation: { uri: string } } }[] }[] }[];
    };
    expect(doc.runs[0]?.results[0]?.locations[0]?.physicalLocation.artifactLocation.uri).toBe(
      `${SUB}/data/routes.json`,
    );
  }, 180_000);

  it("finds no change between a revision and itself, whichever folder it is run from", async () => {
    const r = await portierProcess(["review", "--project", SUB, revs.gain, revs.gain, "--format", "json"], {
      cwd: top,
    });
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as ReviewReport).summary).toMatch(/^no grant gained or lost/);
  }, 180_000);

  it("refuses a revision that has no such folder, naming it", async () => {
    const r = await portier(["review", "--project", project, revs.empty, revs.gain]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`BASE ${revs.empty}: git revision ${revs.empty} has no policies/ and data/ in ${SUB}`);
  }, 180_000);

  it("names the place of a working tree that does not load from the repository's top level", async () => {
    const file = join(project, "data", "routes.json");
    const before = readFileSync(file, "utf8");
    const broken = before.split("\n").map((l) => (l.includes("/history") ? l.replace('"writer"', '"nobody"') : l));
    writeFileSync(file, broken.join("\n"));
    try {
      const r = await portier(["review", "--project", project, revs.base, "--format", "json"]);
      expect(r.code).toBe(2);
      const report = JSON.parse(r.stdout) as ReviewReport;
      expect(report.error?.message).toContain('unknown role "nobody"');
      expect(report.error?.location).toMatchObject({ file: `${SUB}/data/routes.json`, line: historyLine() });
    } finally {
      writeFileSync(file, before);
    }
  }, 180_000);

  it("builds the folder's bundle at a revision (bundle build --rev)", async () => {
    const out = join(top, "base.tar.gz");
    const r = await portier(["bundle", "build", "--project", project, "--rev", revs.base, "--out", out]);
    expect(r.stderr).toBe("");
    expect(r.stdout).toContain(`from ${revs.base}`);
  }, 180_000);
});
