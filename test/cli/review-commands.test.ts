/**
 * `portier bundle build`, `diff`, `explain` and `matrix` from the command line: exit codes, errors naming
 * their file and position, and what each prints (apart from `portier test`, so the two files run in parallel).
 */
import { execFileSync } from "node:child_process";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { portierProcess, portierInProcess as portier, scratchProject } from "../support/cli.js";
import { TENANT_A, TENANT_B } from "../support/sample.js";
import { makeReviewRepo } from "../support/review-repo.js";
import type { Catalog, TenantEntry } from "../../src/catalog/load-catalog.js";

/** What `portier explain --json` prints, as these tests read it. */
type Explained = { decision: { allow: boolean; flow: string | null; reason: string } };

// Each command runs in this process (portier); one test per command runs the real `portier` process
// (portierProcess), for main's printing and exit code.

describe("portier bundle build", () => {
  it("names the file and position of a broken policy, without a stack trace", async () => {
    const dir = scratchProject();
    writeFileSync(join(dir, "policies", "portier", "broken.rego"), "package portier.broken\n\nx := if {\n");
    const r = await portierProcess(["bundle", "build", "--project", dir, "--out", join(dir, "b.tar.gz")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/broken\.rego:\d+/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it("names the data file and field of broken data", async () => {
    const dir = scratchProject();
    const file = join(dir, "data", "routes.json");
    writeFileSync(file, readFileSync(file, "utf8").replace('"eleve_adulte"]', '"eleve_adulte", "surveillant"]'));
    const r = await portier(["bundle", "build", "--project", dir, "--out", join(dir, "b.tar.gz")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/data\/routes\.json:\d+: routes\[\d+\]\.allowed\[\d+\]: unknown role "surveillant"/);
  });
});

describe("portier bundle build --rev", () => {
  it("builds a git revision without a checkout, and never over an existing file without --force", async () => {
    const repo = makeReviewRepo();
    const routes = readFileSync(join(repo.dir, "data", "routes.json"), "utf8");
    const r = await portier(["bundle", "build", "--project", repo.dir, "--rev", repo.base]);
    const out = join(repo.dir, "build", "candidates", `${repo.base.slice(0, 12)}.tar.gz`);
    expect(r.stdout).toMatch(`bundle ok: ${out} from ${repo.base} (${repo.base}) (revision `);
    expect(r.code).toBe(0);
    // The candidate is the base's policy: the role gain of the working tree is not in it.
    const gained = ["diff", "--format", "json", out, repo.dir];
    const diff = JSON.parse((await portier(gained)).stdout) as { changes: { column: string }[] };
    expect(diff.changes.map((c) => c.column)).toContain("enseignant_adulte");
    // Nothing of the working tree moved.
    expect(readFileSync(join(repo.dir, "data", "routes.json"), "utf8")).toBe(routes);
    expect(
      execFileSync("git", ["-C", repo.dir, "status", "--porcelain", "--", "data", "policies"], { encoding: "utf8" }),
    ).toBe("");

    // The running service's bundle, or any file: refused unless --force.
    const served = join(repo.dir, "build", "bundle.tar.gz");
    writeFileSync(served, "served");
    const refused = await portier(["bundle", "build", "--project", repo.dir, "--rev", "main", "--out", served]);
    expect(refused.stderr).toMatch(
      /--out .*bundle\.tar\.gz exists \(a running service may be watching it\); pass --force/,
    );
    expect(refused.code).toBe(2);
    expect(readFileSync(served, "utf8")).toBe("served");
    const forced = await portier([
      "bundle",
      "build",
      "--project",
      repo.dir,
      "--rev",
      "main",
      "--out",
      served,
      "--force",
    ]);
    expect(forced.code).toBe(0);
    expect(statSync(served).size).toBeGreaterThan(1000);

    const missing = await portier(["bundle", "build", "--project", repo.dir, "--rev", "no-such-rev"]);
    expect(missing.stderr).toMatch(/not found: no-such-rev \(no git revision of /);
    expect(missing.code).toBe(2);
  }, 120_000);
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
    const doc = JSON.parse(readFileSync(file, "utf8")) as Pick<Catalog, "routes">;
    const route = doc.routes.find((r) => r.template === "/v2/{codeOrganisme}/elevesAdultes")!;
    route.allowed = ["eleve_adulte"];
    writeFileSync(file, JSON.stringify(doc, null, 2));
    const r = await portier(["diff", join(PROJECT_ROOT, "build", "bundle.tar.gz"), dir]);
    expect(r.stdout).toContain("+ eleve_adulte on /v2/{codeOrganisme}/elevesAdultes: deny (role_not_allowed) -> allow");
    expect(r.stdout).toContain(
      "- enseignant_adulte on /v2/{codeOrganisme}/elevesAdultes: allow -> deny (role_not_allowed)",
    );
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
    expect(r.stderr).toMatch(/not found: no-such-revision-or-file \(no bundle file, policy folder or git revision/);
    expect(r.stderr).not.toMatch(/fatal|ENOENT/);
  });

  it("sees a tenant binding moved in data/tenants.json, in text and Markdown", async () => {
    const dir = scratchProject();
    const file = join(dir, "data", "tenants.json");
    const doc = JSON.parse(readFileSync(file, "utf8")) as Pick<Catalog, "tenants">;
    const [first, second] = doc.tenants as [TenantEntry, TenantEntry];
    first.codeOrganisme.push("ORG002");
    second.codeOrganisme = second.codeOrganisme.filter((c) => c !== "ORG002");
    writeFileSync(file, JSON.stringify(doc, null, 2));
    const bundle = join(PROJECT_ROOT, "build", "bundle.tar.gz");
    const r = await portier(["diff", bundle, dir]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      new RegExp(
        `^\\+ application of tenant ${TENANT_A} .* with codeOrganisme ORG002 on \\d+ routes .*: deny ` +
          `\\(tenant_mismatch\\) -> allow$`,
        "m",
      ),
    );
    expect(r.stdout).toMatch(
      new RegExp(
        `^- user with every role of tenant ${TENANT_B} .* with codeOrganisme ORG002 on .*: allow -> deny ` +
          `\\(tenant_mismatch\\)$`,
        "m",
      ),
    );
    expect(r.stdout).not.toContain("no change");
    const md = await portier(["diff", "--format", "md", bundle, dir]);
    expect(md.code).toBe(1);
    expect(md.stdout).toMatch(/^### Portier policy diff: /);
    expect(md.stdout).toContain("| Change | Who | Route(s) | Before | After |");
    expect(md.stdout).toMatch(/^\| gained \| application of tenant 3f7c1a52.* with codeOrganisme ORG002 \|/m);
    const json = JSON.parse((await portier(["diff", "--format", "json", bundle, dir])).stdout) as {
      probeChanges: { kind: string; change: string }[];
    };
    expect(json.probeChanges.some((c) => c.kind === "tenant" && c.change === "gained")).toBe(true);
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
    const allow = await portier([
      "explain",
      "--role",
      "enseignant_jeune",
      ...tenant,
      "GET",
      "/v2/ORG001/elevesJeunes/42/absences",
    ]);
    expect(allow.stdout).toMatch(/^ALLOW GET/);
    expect(allow.code).toBe(0);
    const deny = await portier([
      "explain",
      "--role",
      "eleve_adulte",
      ...tenant,
      "GET",
      "/v2/ORG001/elevesJeunes/42/absences",
    ]);
    expect(deny.stdout).toContain("reason:     role_not_allowed");
    expect(deny.code).toBe(1);
    const app = await portier(["explain", "--flow", "application", "--json", "GET", "/v1/roles"]);
    expect((JSON.parse(app.stdout) as Explained).decision).toMatchObject({ allow: true, flow: "application" });
  });

  it("refuses an unknown role and lists the known ones", async () => {
    const r = await portierProcess(["explain", "--role", "nope", "GET", "/v1/roles"]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/--role: unknown role "nope"; the policy knows: .*enseignant_jeune.*eleve_adulte/);
  });

  it("shows every check with its outcome, and hints at --tenant on a tenant mismatch", async () => {
    const r = await portier(["explain", "--role", "eleve_jeune", "POST", "/v2/ORG002/elevesJeunes"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^ {4}FAIL {2}method +method_not_allowed/m);
    expect(r.stdout).toMatch(/^ {4}FAIL {2}tenant binding +tenant_mismatch/m);
    // No entry of the route for POST, so no role list applies to it.
    expect(r.stdout).toMatch(/^ {4}n\/a {3}role list +no entry of the route for POST, so no role list applies$/m);
    expect(r.stdout).toMatch(/^ {4}pass {2}route +matches/m);
    expect(r.stdout).toMatch(/hint: +the caller has no tenant: pass --tenant/);
  });

  it("evaluates a decision input as logged (--input), from a log line or the input alone", async () => {
    const dir = scratchProject();
    const input = {
      method: "GET",
      path: "/v2/ORG001/centres",
      token: { client_id: "m", aud: ["apiclients"], scope: ["apiclients"], tenant_id: TENANT_A },
      roles: [],
      synced: false,
      role_check: "enforce",
    };
    writeFileSync(join(dir, "line.json"), JSON.stringify({ event: "decision", input, allow: true }));
    const r = await portier(["explain", "--input", join(dir, "line.json")]);
    expect(r.stdout).toMatch(/^ALLOW GET \/v2\/ORG001\/centres for the logged caller \(flow application/);
    expect(r.code).toBe(0);
    writeFileSync(join(dir, "input.json"), JSON.stringify({ ...input, path: "/v2/ORG002/centres" }));
    const d = await portier(["explain", "--input", join(dir, "input.json"), "--json"]);
    expect((JSON.parse(d.stdout) as Explained).decision.reason).toBe("tenant_mismatch");
    expect(d.code).toBe(1);
  });

  it("rejects bad options with exit 2, in one line pointing to --help", async () => {
    for (const args of [
      ["matrix", "--format", "pdf"],
      ["explain", "GET"],
      ["explain", "--bogus", "GET", "/"],
      ["nope"],
    ]) {
      const r = await portier(args);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^portier: .*; portier( \w+)? --help lists the (options|commands)\n$/);
    }
  });
});
