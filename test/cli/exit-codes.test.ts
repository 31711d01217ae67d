/**
 * One exit-code table for every command (src/cli/exit-codes.ts): broken data exits 2 from every command that
 * reads data/ (it kept the command from answering), the command's finding exits 1 (a deny, a change, a failed
 * test), and every --help shows the table. A script can then tell "no" from "no answer".
 */
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { EXIT, ERROR_MEANING } from "../../src/cli/exit-codes.js";
import { annotatedEntrypoints, OPA_IGNORES, writeBundleData } from "../../src/toolchain/build-bundle.js";
import { opaPath, runOpa } from "../../src/toolchain/opa.js";
import { COMMAND_NAMES, portierInProcess as portier, portierProcess, scratchProject } from "../support/cli.js";
import type { Catalog } from "../../src/catalog/load-catalog.js";
import { applicationDecisionLine } from "../support/decision-log.js";

let broken: string;
let changed: string;
let failingTests: string;
let log: string;

beforeAll(() => {
  broken = scratchProject();
  writeFileSync(join(broken, "data", "routes.json"), '{"routes": [\n');
  changed = scratchProject();
  const file = join(changed, "data", "routes.json");
  const doc = JSON.parse(readFileSync(file, "utf8")) as Pick<Catalog, "routes">;
  doc.routes.find((r) => r.template === "/v2/{codeOrganisme}/elevesAdultes")!.allowed = ["eleve_adulte"];
  writeFileSync(file, JSON.stringify(doc, null, 2));
  failingTests = scratchProject();
  appendFileSync(join(failingTests, "policies", "portier", "catalog", "catalog_test.rego"), "\ntest_fails if false\n");
  log = join(changed, "decisions.log");
  // Logged as denied; the project's policy now allows it.
  writeFileSync(log, `${applicationDecisionLine(false, "route_unknown")}\n`);
});

describe("broken data/ exits 2 from every command that reads it, naming the file", () => {
  const commands: [string, () => string[]][] = [
    ["data check", () => ["data", "check", "--project", broken]],
    ["bundle build", () => ["bundle", "build", "--project", broken, "--out", join(broken, "b.tar.gz")]],
    ["test", () => ["test", "--project", broken]],
    ["matrix", () => ["matrix", "--source", broken]],
    ["explain", () => ["explain", "--source", broken, "--flow", "application", "GET", "/v1/roles"]],
    ["diff", () => ["diff", PROJECT_ROOT, broken]],
    ["replay", () => ["replay", "--log", log, "--source", broken]],
  ];
  it.each(commands)(
    "%s",
    async (_name, args) => {
      const r = await portier(args());
      expect(r.stderr).toMatch(/data\/routes\.json:2:1: invalid JSON/);
      expect(r.code).toBe(EXIT.error);
    },
    60_000,
  );

  it("the real process too (main's mapping of an error)", async () => {
    const r = await portierProcess(["explain", "--source", broken, "--flow", "application", "GET", "/v1/roles"]);
    expect(r.code).toBe(2);
    // `! portier explain ...` must not pass on broken data: 2 is not the deny's 1.
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  }, 60_000);
});

describe("the finding exits 1", () => {
  const commands: [string, () => string[]][] = [
    ["explain: a deny", () => ["explain", "--role", "eleve_adulte", "GET", "/v2/ORG001/elevesJeunes/42/absences"]],
    ["diff: a change", () => ["diff", PROJECT_ROOT, changed]],
    ["replay: a newly allowed call", () => ["replay", "--log", log, "--source", PROJECT_ROOT]],
    ["test: a failed test", () => ["test", "--project", failingTests]],
  ];
  it.each(commands)(
    "%s",
    async (_name, args) => {
      const r = await portier(args());
      expect(r.stderr).not.toMatch(/^portier/m);
      expect(r.code).toBe(EXIT.finding);
    },
    120_000,
  );

  it("but a policy_error is no decision: explain exits 2", async () => {
    // A policy that errors on /v1/roles, built with opa directly (portier bundle build refuses it).
    const dir = scratchProject();
    const match = join(dir, "policies", "portier", "routes", "match.rego");
    const probe = '\t"probe": {"k": v | some v in [1, 2]; _shown.template == "/v1/roles"},\n';
    writeFileSync(
      match,
      readFileSync(match, "utf8").replace('\t"template": _shown.template,\n', (t) => t + probe),
    );
    const data = writeBundleData(dir, join(dir, "bundle-data"));
    const entrypoints = await annotatedEntrypoints(opaPath(), join(dir, "policies"));
    const bundle = join(dir, "faulty.tar.gz");
    const built = await runOpa(opaPath(), [
      "build",
      "-t",
      "wasm",
      ...entrypoints.flatMap((e) => ["-e", e]),
      ...OPA_IGNORES,
      "-o",
      bundle,
      join(dir, "policies"),
      data.dir,
    ]);
    expect(built.stderr).toBe("");
    const r = await portier(["explain", "--bundle", bundle, "--flow", "application", "GET", "/v1/roles"]);
    expect(r.stdout).toMatch(/reason: +policy_error/);
    expect(r.code).toBe(EXIT.error);
  }, 60_000);

  it("and success 0: an allow, no change", async () => {
    expect((await portier(["explain", "--flow", "application", "GET", "/v1/roles"])).code).toBe(EXIT.ok);
    expect((await portier(["diff", PROJECT_ROOT, PROJECT_ROOT])).code).toBe(EXIT.ok);
  }, 60_000);
});

describe("every command's --help ends with the table", () => {
  it.each(COMMAND_NAMES)("%s", async (name) => {
    const r = await portier([name, "--help"]);
    const table = r.stdout.slice(r.stdout.lastIndexOf("exit codes:"));
    expect(table).toMatch(/^exit codes:\n {2}0 {2}\S/);
    expect(table).toContain(`\n  2  ${ERROR_MEANING}`);
  });
});
