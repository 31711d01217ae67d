import { readFileSync, writeFileSync, appendFileSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { writeBundleData } from "../../src/toolchain/build-bundle.js";
import { opaPath, runOpa } from "../../src/toolchain/opa.js";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { portierProcess, portierInProcess as portier, scratchProject } from "../support/cli.js";
import { findAll, parseXml } from "../support/xml.js";
import { newerSource } from "../../src/review/index.js";
import { TENANT_A, TENANT_B } from "../support/sample.js";

// Each command runs in this process (portier); one test per command runs the real `portier` process
// (portierProcess), for main's printing and exit code.

// Appended to a scratch copy's catalog_test.rego: a test that prints then fails, and a data-driven test
// with one case whose route is undefined (such a case used to vanish from a set of failures).
const FAILING_TESTS = `
test_prints_then_fails if {
	print("wrong decisions:", {"Élève & <b>"})
	false
}

test_route_cases[name] if {
	some name, path in {"known": "/v1/roles", "undefined": "/nowhere"}
	data.portier.routes.match.template == path with input as {"path": path}
}
`;

function failingProject(): string {
  const dir = scratchProject();
  appendFileSync(join(dir, "policies", "portier", "catalog", "catalog_test.rego"), FAILING_TESTS);
  return dir;
}

/** OPA's own coverage figure for a project, straight from `opa test --coverage --format json`. */
async function opaCoverage(dir: string): Promise<number> {
  const data = writeBundleData(dir, join(dir, "build", "bundle-data"));
  const out = await runOpa(opaPath(), ["test", "--timeout", "60s", "--coverage", "--format", "json", join(dir, "policies"), data.dir]);
  return (JSON.parse(out.stdout) as { coverage: number }).coverage;
}

describe("portier test", { timeout: 240_000 }, () => {
  it("passes on the project with full coverage", async () => {
    const r = await portier(["test"]);
    expect(r.stdout).toMatch(/^coverage: 100\.00% \(opa\)$/m);
    expect(r.stdout).toMatch(/^policy: \d+ passed, 0 failed$/m);
    expect(r.stdout).not.toMatch(/^PASS /m);
    expect(r.code).toBe(0);
  });

  it("prints each failing test and data-driven case with file:line and what it printed, decoded", async () => {
    const r = await portier(["test", "--project", failingProject()]);
    expect(r.stdout).toMatch(/^FAIL .*policies\/portier\/catalog\/catalog_test\.rego:\d+ data\.portier\.catalog_test\.test_prints_then_fails$/m);
    expect(r.stdout).toContain('\n    wrong decisions: {"Élève & <b>"}\n');
    expect(r.stdout).not.toContain(Buffer.from("wrong decisions").toString("base64").slice(0, 16));
    expect(r.stdout).toMatch(/^FAIL .*catalog_test\.rego:\d+ data\.portier\.catalog_test\.test_route_cases\[undefined\]$/m);
    expect(r.stdout).not.toContain("test_route_cases[known]");
    expect(r.stdout).toMatch(/^policy: \d+ passed, 2 failed$/m);
    expect(r.code).toBe(1);
  });

  it("-v lists every test and case", async () => {
    const r = await portier(["test", "-v"]);
    // On failure, show what opa reported (a flake under load once left this line out).
    expect(r.stdout + r.stderr).toMatch(/^policy: \d+ passed, 0 failed$/m);
    const passed = Number(/^policy: (\d+) passed, 0 failed$/m.exec(r.stdout)?.[1]);
    expect(passed).toBeGreaterThan(0);
    expect(r.stdout.match(/^PASS \S+:\d+ data\..+$/gm)).toHaveLength(passed);
    expect(r.code).toBe(0);
  });

  it("--format junit writes JUnit XML: one testcase per test or case, failures with their output", async () => {
    const r = await portier(["test", "--project", failingProject(), "--format", "junit"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^policy: (\d+) passed, 2 failed$/m);
    const passed = Number(/^policy: (\d+) passed/m.exec(r.stderr)?.[1]);
    const root = parseXml(r.stdout);
    expect(root.name).toBe("testsuites");
    expect(root.attributes).toMatchObject({ tests: String(passed + 2 + 1), failures: "3" });
    const cases = findAll(root, "testcase");
    expect(cases).toHaveLength(passed + 2 + 1);
    const failing = cases.filter((c) => findAll(c, "failure").length > 0).map((c) => c.attributes.name);
    expect(failing).toEqual(["test_prints_then_fails", "test_route_cases[undefined]", "coverage >= 100%"]);
    const printed = cases.find((c) => c.attributes.name === "test_prints_then_fails")!;
    expect(printed.attributes).toMatchObject({ classname: "data.portier.catalog_test", line: expect.stringMatching(/^\d+$/) });
    expect(findAll(printed, "failure")[0]!.text).toBe('wrong decisions: {"Élève & <b>"}\n');
  });

  it("--format junit --output FILE writes the XML there and the text report to stdout", async () => {
    const dir = scratchProject();
    const file = join(dir, "policy-junit.xml");
    const r = await portier(["test", "--project", dir, "--format", "junit", "--output", file]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^policy: \d+ passed, 0 failed$/m);
    const root = parseXml(readFileSync(file, "utf8"));
    expect(root.attributes.failures).toBe("0");
    expect(findAll(root, "property").find((p) => p.attributes.name === "coverage")?.attributes.value).toBe("100");
  });

  it("refuses a --min-coverage that is not a percentage, and bad --format/--output", async () => {
    const bad = ["abc", "", "NaN", "-1", "101", "50%"];
    const runs = await Promise.all([
      ...bad.map((value) => portier(["test", `--min-coverage=${value}`])),
      portier(["test", "--format", "xml"]),
      portier(["test", "--output", "x.xml"]),
    ]);
    bad.forEach((value, i) => {
      expect(runs[i]!.code, value).toBe(2);
      expect(runs[i]!.stderr).toContain(`--min-coverage: "${value}" is not a percentage from 0 to 100`);
    });
    expect(runs[bad.length]!.stderr).toContain('--format: "xml" is not text or junit');
    expect(runs[bad.length + 1]!.stderr).toContain("--output: only with --format junit");
  });

  it("names a missing --opa binary and the cause", async () => {
    const r = await portierProcess(["test", "--opa", "/nonexistent/opa"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('cannot run opa "/nonexistent/opa": no such file (ENOENT)');
    expect(r.stdout).toBe("policy: not run (see the error above)\n");
  });

  it("names the file and line of a test that does not compile, and still closes with the policy line", async () => {
    const dir = scratchProject();
    appendFileSync(join(dir, "policies", "portier", "catalog", "catalog_test.rego"), "\ntest_broken if {\n\tunknown_function(1)\n}\n");
    const r = await portier(["test", "--project", dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/opa test did not run \(exit \d+\):\n.*catalog_test\.rego:\d+/);
    expect(r.stdout.trimEnd().split("\n").at(-1)).toBe("policy: not run (see the error above)");
  });

  it("fails when coverage drops below 100%, with OPA's own figure", async () => {
    const dir = scratchProject();
    appendFileSync(join(dir, "policies", "portier", "catalog", "catalog.rego"), '\nuntested := "never evaluated by a test" if input.nothing\n');
    const r = await portier(["test", "--project", dir]);
    expect(r.stdout).toMatch(/^not covered: .*catalog\.rego:\d+$/m);
    const figure = await opaCoverage(dir);
    expect(figure).toBeLessThan(100);
    expect(r.stdout).toContain(`coverage: ${figure.toFixed(2)}% (opa)`);
    expect(r.stdout).toContain(`coverage ${figure.toFixed(2)}% is below the required 100%`);
    expect(r.code).toBe(1);
    expect((await portier(["test", "--project", dir, "--min-coverage", String(Math.floor(figure))])).code).toBe(0);
  });
});

describe("portier bundle build", () => {
  it("names the file and position of a broken policy, without a stack trace", async () => {
    const dir = scratchProject();
    writeFileSync(join(dir, "policies", "portier", "broken.rego"), "package portier.broken\n\nx := if {\n");
    const r = await portierProcess(["bundle", "build", "--project", dir, "--out", join(dir, "b.tar.gz")]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/broken\.rego:\d+/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it("names the data file and field of broken data", async () => {
    const dir = scratchProject();
    const file = join(dir, "data", "routes.json");
    writeFileSync(file, readFileSync(file, "utf8").replace('"eleve_adulte"]', '"eleve_adulte", "surveillant"]'));
    const r = await portier(["bundle", "build", "--project", dir, "--out", join(dir, "b.tar.gz")]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/data\/routes\.json: routes\[\d+\]\.allowed\[\d+\]: unknown role "surveillant"/);
  });
});

describe("portier diff", () => {
  it("exits 0 with no change between a folder and itself", async () => {
    const r = await portier(["diff", PROJECT_ROOT, PROJECT_ROOT]);
    expect(r.stdout).toBe("no change in who may call what\n");
    expect(r.code).toBe(0);
  });

  it("lists grants gained and lost and exits 1", async () => {
    const dir = scratchProject();
    const file = join(dir, "data", "routes.json");
    const doc = JSON.parse(readFileSync(file, "utf8"));
    const i = doc.routes.findIndex((r: { template: string }) => r.template === "/v2/{codeOrganisme}/elevesAdultes");
    doc.routes[i].allowed = ["eleve_adulte"];
    writeFileSync(file, JSON.stringify(doc, null, 2));
    const r = await portier(["diff", join(PROJECT_ROOT, "build", "bundle.tar.gz"), dir]);
    expect(r.stdout).toContain("+ eleve_adulte on /v2/{codeOrganisme}/elevesAdultes: deny (role_not_allowed) -> allow");
    expect(r.stdout).toContain("- enseignant_adulte on /v2/{codeOrganisme}/elevesAdultes: allow -> deny (role_not_allowed)");
    expect(r.stdout).toMatch(/^1 grant\(s\) gained, 1 lost/m);
    expect(r.code).toBe(1);
  });

  it("accepts a git revision", async () => {
    const r = await portier(["diff", "HEAD", PROJECT_ROOT]);
    expect([0, 1]).toContain(r.code);
    expect(r.stdout.length).toBeGreaterThan(0);
  });

  it("says what it could not read, with exit 2 (1 means changes)", async () => {
    const r = await portierProcess(["diff", "no-such-revision-or-file", PROJECT_ROOT]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no-such-revision-or-file: not a bundle file, a policy folder, or a git revision/);
  });

  it("sees a tenant binding moved in data/tenants.json, in text and Markdown", async () => {
    const dir = scratchProject();
    const file = join(dir, "data", "tenants.json");
    const doc = JSON.parse(readFileSync(file, "utf8"));
    doc.tenants[0].codeOrganisme.push("ORG002");
    doc.tenants[1].codeOrganisme = doc.tenants[1].codeOrganisme.filter((c: string) => c !== "ORG002");
    writeFileSync(file, JSON.stringify(doc, null, 2));
    const bundle = join(PROJECT_ROOT, "build", "bundle.tar.gz");
    const r = await portier(["diff", bundle, dir]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(new RegExp(`^\\+ application of tenant ${TENANT_A} .* with codeOrganisme ORG002 on \\d+ routes .*: deny \\(tenant_mismatch\\) -> allow$`, "m"));
    expect(r.stdout).toMatch(new RegExp(`^- user with every role of tenant ${TENANT_B} .* with codeOrganisme ORG002 on .*: allow -> deny \\(tenant_mismatch\\)$`, "m"));
    expect(r.stdout).not.toContain("no change");
    const md = await portier(["diff", "--format", "md", bundle, dir]);
    expect(md.code).toBe(1);
    expect(md.stdout).toMatch(/^### Portier policy diff: /);
    expect(md.stdout).toContain("| Change | Who | Route(s) | Before | After |");
    expect(md.stdout).toMatch(/^\| gained \| application of tenant 3f7c1a52.* with codeOrganisme ORG002 \|/m);
    const json = JSON.parse((await portier(["diff", "--format", "json", bundle, dir])).stdout);
    expect(json.probeChanges.some((c: { kind: string; change: string }) => c.kind === "tenant" && c.change === "gained")).toBe(true);
  });

  it("refuses an unknown --format with exit 2", async () => {
    const r = await portier(["diff", "--format", "pdf", PROJECT_ROOT, PROJECT_ROOT]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--format must be one of text, md, json/);
  });
});

describe("portier explain and matrix", () => {
  it("explains an allow (exit 0) and a deny (exit 1)", async () => {
    const tenant = ["--tenant", TENANT_A];
    const allow = await portier(["explain", "--role", "enseignant_jeune", ...tenant, "GET", "/v2/ORG001/elevesJeunes/42/absences"]);
    expect(allow.stdout).toMatch(/^ALLOW GET/);
    expect(allow.code).toBe(0);
    const deny = await portier(["explain", "--role", "eleve_adulte", ...tenant, "GET", "/v2/ORG001/elevesJeunes/42/absences"]);
    expect(deny.stdout).toContain("reason:     role_not_allowed");
    expect(deny.code).toBe(1);
    const app = await portier(["explain", "--flow", "application", "--json", "GET", "/v1/roles"]);
    expect(JSON.parse(app.stdout).decision).toMatchObject({ allow: true, flow: "application" });
  });

  it("refuses an unknown role and lists the known ones", async () => {
    const r = await portierProcess(["explain", "--role", "nope", "GET", "/v1/roles"]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/unknown role\(s\) nope; the policy knows: .*enseignant_jeune.*eleve_adulte/);
  });

  it("shows every check with its outcome, and hints at --tenant on a tenant mismatch", async () => {
    const r = await portier(["explain", "--role", "eleve_jeune", "POST", "/v2/ORG002/elevesJeunes"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^ {4}FAIL {2}method +method_not_allowed/m);
    expect(r.stdout).toMatch(/^ {4}FAIL {2}tenant binding +tenant_mismatch/m);
    expect(r.stdout).toMatch(/^ {4}FAIL {2}role list +role_not_allowed/m);
    expect(r.stdout).toMatch(/^ {4}pass {2}route +matches/m);
    expect(r.stdout).toMatch(/hint: +the caller has no tenant: pass --tenant/);
  });

  it("evaluates a decision input as logged (--input), from a log line or the input alone", async () => {
    const dir = scratchProject();
    const input = { method: "GET", path: "/v2/ORG001/centres", token: { client_id: "m", aud: ["apiclients"], scope: ["apiclients"], tenant_id: TENANT_A }, roles: [], synced: false, role_check: "enforce" };
    writeFileSync(join(dir, "line.json"), JSON.stringify({ event: "decision", input, allow: true }));
    const r = await portier(["explain", "--input", join(dir, "line.json")]);
    expect(r.stdout).toMatch(/^ALLOW GET \/v2\/ORG001\/centres for the logged caller \(flow application/);
    expect(r.code).toBe(0);
    writeFileSync(join(dir, "input.json"), JSON.stringify({ ...input, path: "/v2/ORG002/centres" }));
    const d = await portier(["explain", "--input", join(dir, "input.json"), "--json"]);
    expect(JSON.parse(d.stdout).decision.reason).toBe("tenant_mismatch");
    expect(d.code).toBe(1);
  });

  it("warns when policies/ or data/ changed after the bundle was built, and --source explains the sources", async () => {
    const dir = scratchProject();
    const bundle = join(dir, "bundle.tar.gz");
    expect((await portier(["bundle", "build", "--project", dir, "--out", bundle])).code).toBe(0);
    const past = new Date(Date.now() - 60_000);
    utimesSync(bundle, past, past);
    expect(newerSource(bundle, dir)).toMatch(/^(policies|data)\//);
    utimesSync(bundle, new Date(), new Date());
    expect(newerSource(bundle, dir)).toBeUndefined();
    const fromSource = await portier(["explain", "--source", dir, "--flow", "application", "GET", "/v1/roles"]);
    expect(fromSource.code).toBe(0);
  });

  it("rejects bad options with exit 2 and the usage", async () => {
    for (const args of [["matrix", "--format", "pdf"], ["explain", "GET"], ["explain", "--bogus", "GET", "/"], ["nope"]]) {
      const r = await portier(args);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/usage: portier/);
    }
  });
});
