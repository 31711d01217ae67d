import { readFileSync, writeFileSync, appendFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { portier, scratchProject } from "../support/cli.js";

describe("portier test", () => {
  it("passes on the project with full coverage", () => {
    const r = portier(["test"]);
    expect(r.stdout).toMatch(/^coverage: 100\.00%$/m);
    expect(r.stdout).toMatch(/^policy: \d+ passed, 0 failed$/m);
    expect(r.code).toBe(0);
  });

  it("prints each failing test with file:line and fails", () => {
    const dir = scratchProject();
    appendFileSync(join(dir, "policies", "portier", "catalog_test.rego"), "\ntest_deliberately_wrong if {\n\tcount(data.portier.catalog.routes) == 30\n}\n");
    const r = portier(["test", "--project", dir]);
    expect(r.stdout).toMatch(/^FAIL .*policies\/portier\/catalog_test\.rego:\d+ data\.portier\.catalog_test\.test_deliberately_wrong/m);
    expect(r.stdout).toMatch(/^policy: \d+ passed, 1 failed$/m);
    expect(r.code).toBe(1);
  });

  it("fails when coverage drops below 100%", () => {
    const dir = scratchProject();
    appendFileSync(join(dir, "policies", "portier", "catalog.rego"), '\nuntested := "never evaluated by a test" if input.nothing\n');
    const r = portier(["test", "--project", dir]);
    expect(r.stdout).toMatch(/^not covered: .*catalog\.rego:\d+$/m);
    expect(r.stdout).toMatch(/below the required 100%/);
    expect(r.code).toBe(1);
  });
});

describe("portier bundle build", () => {
  it("names the file and position of a broken policy, without a stack trace", () => {
    const dir = scratchProject();
    writeFileSync(join(dir, "policies", "portier", "broken.rego"), "package portier.broken\n\nx := if {\n");
    const r = portier(["bundle", "build", "--project", dir, "--out", join(dir, "b.tar.gz")]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/broken\.rego:\d+/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it("names the data file and field of broken data", () => {
    const dir = scratchProject();
    const file = join(dir, "data", "routes.json");
    writeFileSync(file, readFileSync(file, "utf8").replace('"eleve_adulte"]', '"eleve_adulte", "surveillant"]'));
    const r = portier(["bundle", "build", "--project", dir, "--out", join(dir, "b.tar.gz")]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/data\/routes\.json: routes\[\d+\]\.allowed\[\d+\]: unknown role "surveillant"/);
  });
});

describe("portier diff", () => {
  it("exits 0 with no change between a folder and itself", () => {
    const r = portier(["diff", PROJECT_ROOT, PROJECT_ROOT]);
    expect(r.stdout).toBe("no change in who may call what\n");
    expect(r.code).toBe(0);
  });

  it("lists grants gained and lost and exits 1", () => {
    const dir = scratchProject();
    const file = join(dir, "data", "routes.json");
    const doc = JSON.parse(readFileSync(file, "utf8"));
    const i = doc.routes.findIndex((r: { template: string }) => r.template === "/v2/{codeOrganisme}/elevesAdultes");
    doc.routes[i].allowed = ["eleve_adulte"];
    writeFileSync(file, JSON.stringify(doc, null, 2));
    const r = portier(["diff", join(PROJECT_ROOT, "build", "bundle.tar.gz"), dir]);
    expect(r.stdout).toContain("+ eleve_adulte on /v2/{codeOrganisme}/elevesAdultes: deny (role_not_allowed) -> allow");
    expect(r.stdout).toContain("- enseignant_adulte on /v2/{codeOrganisme}/elevesAdultes: allow -> deny (role_not_allowed)");
    expect(r.stdout).toMatch(/^1 grant\(s\) gained, 1 lost/m);
    expect(r.code).toBe(1);
  });

  it("accepts a git revision", () => {
    const r = portier(["diff", "HEAD", PROJECT_ROOT]);
    expect([0, 1]).toContain(r.code);
    expect(r.stdout.length).toBeGreaterThan(0);
  });

  it("says what it could not read", () => {
    const r = portier(["diff", "no-such-revision-or-file", PROJECT_ROOT]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no-such-revision-or-file: not a bundle file, a policy folder, or a git revision/);
  });
});

describe("portier explain and matrix", () => {
  it("explains an allow (exit 0) and a deny (exit 1)", () => {
    const tenant = ["--tenant", "3f7c1a52-8d1e-4b7a-9c3e-5a2b6d8e9f01"];
    const allow = portier(["explain", "--role", "enseignant_jeune", ...tenant, "GET", "/v2/ORG001/elevesJeunes/42/absences"]);
    expect(allow.stdout).toMatch(/^ALLOW GET/);
    expect(allow.code).toBe(0);
    const deny = portier(["explain", "--role", "eleve_adulte", ...tenant, "GET", "/v2/ORG001/elevesJeunes/42/absences"]);
    expect(deny.stdout).toContain("reason:     role_not_allowed");
    expect(deny.code).toBe(1);
    const app = portier(["explain", "--flow", "application", "--json", "GET", "/v1/roles"]);
    expect(JSON.parse(app.stdout)).toMatchObject({ allow: true, flow: "application" });
  });

  it("rejects bad options with exit 2 and the usage", () => {
    for (const args of [["matrix", "--format", "pdf"], ["explain", "GET"], ["explain", "--bogus", "GET", "/"], ["nope"]]) {
      const r = portier(args);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/usage: portier/);
    }
  });
});
