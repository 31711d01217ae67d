/**
 * Policy projects: how every command finds one (--project, the current folder, Portier's own), the service
 * configuration a project carries (portier.json), and a team's project from `portier init` to its own tests,
 * explanations and a user token from the local issuer.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeJwt } from "jose";
import { resolveProject, ProjectError } from "../../src/toolchain/project.js";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { loadConfig, ConfigError } from "../../src/service/index.js";
import { startIssuer, loadUsers } from "../../src/issuer/index.js";
import { mintUserToken } from "../../src/cli/commands/token.js";
import { portierInProcess as portier, portierProcess } from "../support/cli.js";

const EXAMPLE = join(PROJECT_ROOT, "examples", "authzen-todo");
const scratch = () => mkdtempSync(join(tmpdir(), "portier-team-"));

describe("resolveProject", () => {
  it("takes --project, else the current folder when it is a project, else Portier's own", () => {
    expect(resolveProject(EXAMPLE, "/").dir).toBe(EXAMPLE);
    expect(resolveProject(undefined, EXAMPLE).dir).toBe(EXAMPLE);
    expect(resolveProject(undefined, tmpdir())).toMatchObject({ dir: PROJECT_ROOT, isPortier: true });
  });

  it("builds a team's project with Portier's policies, its tests added and the spec's oracle left out", () => {
    const p = resolveProject(EXAMPLE);
    expect(p.policyDir).toBe(join(PROJECT_ROOT, "policies"));
    expect(p.testRoots).toContain(join(EXAMPLE, "policies"));
    expect(p.testRoots.some((f) => f.endsWith("spec_table_test.rego"))).toBe(false);
    expect(resolveProject(PROJECT_ROOT).testRoots).toEqual([join(PROJECT_ROOT, "policies")]);
  });

  it("refuses a folder that is no project, naming the fix", () => {
    expect(() => resolveProject(tmpdir())).toThrow(ProjectError);
    expect(() => resolveProject(tmpdir())).toThrow(/has no data\/routes\.json \(portier init .* makes one\)/);
  });
});

describe("portier serve --project: the project's own configuration", () => {
  it("reads portier.json below the flags, its paths from the project, its bundle from build/", () => {
    const config = loadConfig(["--project", EXAMPLE, "--port", "0"], {}, () => undefined, "/");
    expect(config.issuer).toBe("http://127.0.0.1:9400");
    expect(config.directory).toBe(join(EXAMPLE, "data", "sample", "directory.json"));
    expect(config.bundle).toBe(join(EXAMPLE, "build", "bundle.tar.gz"));
    expect(config.port).toBe(0);
  });

  it("finds the project in the current folder or PORTIER_PROJECT; flags and the environment still win", () => {
    const fromCwd = loadConfig(["--issuer", "http://other.test"], {}, () => undefined, EXAMPLE);
    expect(fromCwd.issuer).toBe("http://other.test");
    expect(fromCwd.directory).toBe(join(EXAMPLE, "data", "sample", "directory.json"));
    const fromEnv = loadConfig([], { PORTIER_PROJECT: EXAMPLE, PORTIER_ADMIN_PORT: "0" }, () => undefined, "/");
    expect(fromEnv.bundle).toBe(join(EXAMPLE, "build", "bundle.tar.gz"));
    expect(fromEnv.adminPort).toBe(0);
  });

  it("names a folder that is no project, and an unknown key of portier.json", () => {
    expect(() => loadConfig(["--project", tmpdir()], {}, () => undefined, "/")).toThrow(
      /config\.project: .* is not a policy project \(no data\/routes\.json\)/,
    );
    const dir = scratch();
    cpSync(EXAMPLE, dir, { recursive: true });
    writeFileSync(join(dir, "portier.json"), JSON.stringify({ issuer: "http://x.test", prot: 1 }));
    try {
      expect(() => loadConfig(["--project", dir], {}, () => undefined, "/")).toThrow(ConfigError);
      expect(() => loadConfig(["--project", dir], {}, () => undefined, "/")).toThrow(
        /unknown option "prot" in .*portier\.json/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a team's project from portier init", () => {
  let dir: string;
  beforeAll(async () => {
    dir = join(scratch(), "team");
    const r = await portier(["init", dir]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
  }, 120_000);
  afterAll(() => rmSync(join(dir, ".."), { recursive: true, force: true }));

  it("passes its own tests, generated from its own data, at 100% coverage", async () => {
    const r = await portier(["test", "--project", dir]);
    expect(r.stdout).toContain("coverage: 100.00% (opa)");
    expect(r.stdout).toMatch(/policy: \d+ passed, 0 failed/);
    expect(r.code).toBe(0);
  }, 120_000);

  it("answers data check and explain for its own data when run in its folder", async () => {
    const check = await portierProcess(["data", "check"], { cwd: dir });
    expect(check.stdout).toBe("data ok: 2 roles, 4 routes, 0 tenant bindings\n");
    const allow = await portierProcess(["explain", "--role", "reader", "GET", "/items/7"], { cwd: dir });
    expect(allow.stdout).toMatch(/^ALLOW GET \/items\/7 for/);
    expect(allow.stdout).toContain("deprecated: no");
    expect(allow.stdout).toContain("user scope");
    const deny = await portierProcess(["explain", "--project", dir, "--role", "reader", "GET", "/items/7/history"]);
    expect(deny.stdout).toMatch(/^DENY .* role_not_allowed/s);
    expect(deny.code).toBe(1);
  }, 120_000);

  it("shows a write: writers may POST /items, readers may not, and its generated test says so", async () => {
    const write = await portierProcess(["explain", "--project", dir, "--role", "writer", "POST", "/items"]);
    expect(write.stdout).toMatch(/^ALLOW POST \/items for/);
    const read = await portierProcess(["explain", "--project", dir, "--role", "reader", "POST", "/items"]);
    expect(read.stdout).toMatch(
      /^DENY POST \/items .*none of the caller's roles \[reader\] may call \/items \(allowed: writer\)/s,
    );
    expect(read.code).toBe(1);
    expect(readFileSync(join(dir, "policies", "routes_test.rego"), "utf8")).toContain(
      '["POST", "/items", ["writer"], false]',
    );
  }, 120_000);

  it("fails its generated test when the route table changes, until the test is rewritten", async () => {
    const routes = join(dir, "data", "routes.json");
    const before = readFileSync(routes, "utf8");
    const doc = JSON.parse(before) as { routes: { allowed: string[] }[] };
    doc.routes[3]!.allowed = ["reader", "writer"];
    writeFileSync(routes, JSON.stringify(doc));
    try {
      const failed = await portier(["test", "--project", dir]);
      expect(failed.stdout).toMatch(
        /FAIL .*routes_test\.rego:\d+ .*test_each_route_and_role\[\["GET","\/items\/itemId-1\/history","reader"\]\]/,
      );
      expect(failed.code).toBe(1);
      expect((await portier(["init", "--tests", dir])).code).toBe(0);
      expect((await portier(["test", "--project", dir])).code).toBe(0);
    } finally {
      writeFileSync(routes, before);
      await portier(["init", "--tests", dir]);
    }
  }, 180_000);

  it("refuses to scaffold over a project or into a folder with files", async () => {
    const again = await portier(["init", dir]);
    expect(again.stderr).toMatch(/holds a project already/);
    expect(again.code).toBe(2);
  });

  it("names the field of a broken data/project.json", async () => {
    const file = join(dir, "data", "project.json");
    const before = readFileSync(file, "utf8");
    writeFileSync(file, before.replace('"application"', '"machine"'));
    try {
      const r = await portier(["data", "check", "--project", dir]);
      expect(r.stderr).toMatch(
        /project\.json:\d+: role_checked_flows\[1\]: must be equal to one of the allowed values/,
      );
      expect(r.code).toBe(2);
    } finally {
      writeFileSync(file, before);
    }
  });
});

describe("portier token: a user token from the local issuer", () => {
  it("signs a sample user in by authorization code + PKCE; the token names the directory's subject", async () => {
    const usersFile = join(EXAMPLE, "data", "sample", "users.json");
    const issuer = await startIssuer({ port: 0, usersFile });
    try {
      const token = await mintUserToken({
        issuer: issuer.url,
        user: "rick",
        clientId: "portier-demo-web",
        redirectUri: "http://127.0.0.1:8400/callback",
        scope: "openid",
      });
      const claims = decodeJwt(token);
      const directory = JSON.parse(readFileSync(join(EXAMPLE, "data", "sample", "directory.json"), "utf8")) as {
        sub: string;
        roles: string[];
      }[];
      expect(directory.find((r) => r.sub === claims.sub)?.roles).toEqual(["admin", "evil_genius"]);
      expect(claims.iss).toBe(issuer.url);
      await expect(
        mintUserToken({
          issuer: issuer.url,
          user: "nobody",
          clientId: "portier-demo-web",
          redirectUri: "http://127.0.0.1:8400/callback",
          scope: "openid",
        }),
      ).rejects.toThrow(/did not sign nobody in: login_hint does not name a sample user/);
    } finally {
      await issuer.close();
    }
  });
});

describe("examples/authzen-todo", () => {
  it("keys its five interop users by the scenario's subject ids, each with a directory record", () => {
    const users = loadUsers(join(EXAMPLE, "data", "sample", "users.json"));
    expect(users.map((u) => u.preferred_username)).toEqual(["rick", "morty", "summer", "beth", "jerry"]);
    const directory = JSON.parse(readFileSync(join(EXAMPLE, "data", "sample", "directory.json"), "utf8")) as {
      sub: string;
    }[];
    expect(directory.map((r) => r.sub)).toEqual(users.map((u) => u.sub));
    // Rick's id in the interop payload documents: base64 of a Dex-style (protobuf) subject.
    expect(users[0]!.sub).toBe("CiRmZDA2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs");
  });

  // Its route table has write entries ("methods"), which data/schemas/routes.schema.json learns with per-method
  // routes; until then the project does not load, and this runs once it does.
  const methodsKnown = readFileSync(join(PROJECT_ROOT, "data", "schemas", "routes.schema.json"), "utf8").includes(
    '"methods"',
  );
  it.runIf(methodsKnown)(
    "passes its own policy tests, the interop scenario's decisions among them",
    async () => {
      const r = await portier(["test", "--project", EXAMPLE]);
      expect(r.stdout).toContain("coverage: 100.00% (opa)");
      expect(r.code).toBe(0);
    },
    120_000,
  );
});
