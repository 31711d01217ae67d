/**
 * The service over time: bad config, bundle and directory reload (a broken one keeps the old serving),
 * --bundle-url polling with ETag, the issuer going down, --roles-claim, audit mode, --workers 2.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { copyFileSync, renameSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { portierInProcess } from "../support/cli.js";
import { BROKEN_BUNDLE, BUNDLE, bundleWithRevision } from "./bundles.js";
import {
  ISSUER,
  RECORDS,
  TEACHER,
  UNSYNCED,
  makeKeys,
  runServe,
  startServe,
  tempDir,
  until,
  userToken,
  writeDirectory,
} from "./helpers.js";
import { decide, serveInjected, type InjectedService, type Injector } from "./inject.js";
import { TENANT_A } from "../support/sample.js";
import { json, type ReadyJson, type DecideJson } from "../support/answers.js";
import { metricValue } from "../support/metrics.js";

const running: { stop(): Promise<void> }[] = [];
const servers: Server[] = [];
afterEach(async () => {
  vi.unstubAllEnvs();
  await Promise.all(running.splice(0).map((s) => s.stop()));
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => (s.closeAllConnections(), s.close(r)))));
});

/** The service in this process, its requests over an in-memory connection (inject.ts). */
async function serve(args: string[], env: Record<string, string> = {}): Promise<InjectedService> {
  const s = await serveInjected(args, env);
  running.push(s);
  return s;
}

function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  servers.push(server);
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }),
    ),
  );
}

async function setup() {
  const keys = await makeKeys();
  const dir = tempDir();
  const jwks = join(dir, "jwks.json");
  writeFileSync(jwks, JSON.stringify(keys.jwks));
  const directory = writeDirectory(dir, RECORDS);
  return { keys, dir, jwks, directory };
}

const ready = async (svc: Injector) => json<ReadyJson>(await svc.fetch("/ready"));

describe("configuration", () => {
  it("reports every invalid option by its path, exits non-zero, no stack trace", async () => {
    const r = await runServe(["--issuer", "ftp://x", "--port", "70000", "--role-check", "maybe", "--workers", "0"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("config.port: must be <= 65535");
    expect(r.stderr).toContain("config.roleCheck: must be one of enforce, audit");
    expect(r.stderr).toContain("config.workers: must be >= 1");
    expect(r.stderr).toContain('config.issuer: must match pattern "^https?://"');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  // In process from here: `portier serve` stops at its configuration, before it starts anything.
  it("requires an issuer; reads PORTIER_* environment and a JSON config file", async () => {
    vi.stubEnv("PORTIER_ISSUER", "");
    const none = await portierInProcess(["serve"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("config.issuer: is required");
    vi.stubEnv("PORTIER_ISSUER", ISSUER);
    vi.stubEnv("PORTIER_PORT", "abc");
    const env = await portierInProcess(["serve"]);
    expect(env.stderr).toContain("config.port: must be integer");
    vi.unstubAllEnvs();
    const dir = tempDir();
    const file = join(dir, "portier.json");
    writeFileSync(file, JSON.stringify({ issuer: ISSUER, logLevel: "loud", colour: true }));
    const fromFile = await portierInProcess(["serve", "--config", file]);
    expect(fromFile.code).toBe(2);
    expect(fromFile.stderr).toContain("config.logLevel: must be one of");
    expect(fromFile.stderr).toContain('config: unknown option "colour"');
    expect((await portierInProcess(["serve", "--nope"])).stderr).toContain("config: unknown option '--nope'");
  });

  // The message, in process; that such a failure is one line on stderr and exit 2 is in process.test.ts.
  it("refuses a broken bundle or a missing directory at start, naming the file", async () => {
    const { dir, jwks } = await setup();
    const broken = join(dir, "broken.tar.gz");
    writeFileSync(broken, BROKEN_BUNDLE);
    await expect(
      serveInjected(["--issuer", ISSUER, "--jwks", jwks, "--no-directory", "--bundle", broken]),
    ).rejects.toThrow("broken.tar.gz");
    await expect(
      serveInjected(["--issuer", ISSUER, "--jwks", jwks, "--directory", join(dir, "missing.json")]),
    ).rejects.toThrow("config.directory: file not found");
  });
});

describe("reload", () => {
  it(
    "bundle: a new one is swapped in; a broken one is refused while the old keeps serving, /ready and metrics say " +
      "so",
    async () => {
      const { keys, dir, jwks, directory } = await setup();
      const bundle = join(dir, "bundle.tar.gz");
      copyFileSync(BUNDLE, bundle);
      const svc = await serve(["--issuer", ISSUER, "--jwks", jwks, "--directory", directory, "--bundle", bundle]);
      const token = await userToken(keys, TEACHER);
      writeFileSync(join(dir, "next"), await bundleWithRevision("rev-2"));
      renameSync(join(dir, "next"), bundle);
      await until(async () => (await ready(svc)).policy.revision === "rev-2");

      writeFileSync(bundle, BROKEN_BUNDLE);
      await until(async () => (await ready(svc)).policy.reloadFailures > 0);
      const r = await ready(svc);
      expect(r.ready).toBe(true);
      expect(r.policy.revision).toBe("rev-2");
      expect(r.problems[0]).toMatch(/^policy: last reload refused, revision rev-2 keeps serving: .*bundle\.tar\.gz/);
      const metrics = await (await svc.fetch(`/metrics`)).text();
      expect(metricValue(metrics, "portier_policy_last_load_failed")).toBe(1);
      expect(metrics).toContain('portier_policy_revision_info{revision="rev-2"} 1');
      expect((await decide(svc, { method: "GET", path: "/v1/roles", token })).json).toMatchObject({ allow: true });
      await until(() => svc.output().includes('"event":"policy_refused"'));
    },
    60_000,
  );

  it("directory: a changed file changes the answer; a broken one keeps the old index", async () => {
    const { keys, dir, jwks, directory } = await setup();
    const svc = await serve(["--issuer", ISSUER, "--jwks", jwks, "--directory", directory]);
    const token = await userToken(keys, UNSYNCED);
    expect((await decide(svc, { method: "GET", path: "/v1/roles", token })).json.reason).toBe("not_synced");
    writeDirectory(dir, [...RECORDS, { sub: UNSYNCED, tenant_id: TENANT_A, roles: ["directeur_jeune"] }]);
    await until(async () => (await decide(svc, { method: "GET", path: "/v1/roles", token })).json.allow === true);
    writeFileSync(directory, "[{ not json");
    await until(async () => (await ready(svc)).directory.reloadFailures > 0);
    expect((await decide(svc, { method: "GET", path: "/v1/roles", token })).json.allow).toBe(true);
    expect((await ready(svc)).problems.join()).toContain("directory: last reload refused");
  }, 60_000);
});

describe("--bundle-url", () => {
  it("polls with If-None-Match, swaps a new revision, keeps serving through server errors", async () => {
    const { keys, jwks, directory } = await setup();
    let body = await bundleWithRevision("url-1");
    let etag = '"1"';
    let failing = false;
    const seen: (string | undefined)[] = [];
    const { url } = await listen((req, res) => {
      seen.push(req.headers["if-none-match"]);
      if (failing) return res.writeHead(500).end();
      if (req.headers["if-none-match"] === etag) return res.writeHead(304).end();
      res.writeHead(200, { etag, "content-type": "application/gzip" }).end(body);
    });
    const svc = await serve([
      "--issuer",
      ISSUER,
      "--jwks",
      jwks,
      "--directory",
      directory,
      "--bundle-url",
      `${url}/bundle.tar.gz`,
      "--bundle-poll-seconds",
      "0.2",
    ]);
    expect((await ready(svc)).policy.revision).toBe("url-1");
    await until(() => seen.includes('"1"'));
    body = await bundleWithRevision("url-2");
    etag = '"2"';
    await until(async () => (await ready(svc)).policy.revision === "url-2");
    failing = true;
    const before = seen.length;
    await until(() => seen.length >= before + 2);
    const token = await userToken(keys, TEACHER);
    expect((await decide(svc, { method: "GET", path: "/v1/roles", token })).json.allow).toBe(true);
    expect((await ready(svc)).policy.revision).toBe("url-2");
    await until(() => svc.output().includes('"event":"policy_refused"'));
  }, 60_000);
});

describe("the issuer going down", () => {
  it(
    "keys fetched from a URL keep serving after the issuer stops; a never-reachable issuer is reported by /ready " +
      "and denies 401",
    async () => {
      const { keys, directory } = await setup();
      const { server, url } = await listen((_req, res) =>
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(keys.jwks)),
      );
      const svc = await serve(["--issuer", ISSUER, "--jwks", `${url}/jwks`, "--directory", directory]);
      await until(async () => (await ready(svc)).ready === true);
      const token = await userToken(keys, TEACHER);
      expect((await decide(svc, { method: "GET", path: "/v1/roles", token })).json.allow).toBe(true);
      await new Promise((r) => (server.closeAllConnections(), server.close(r)));
      const fresh = await userToken(keys, TEACHER, { jti: "another" });
      expect((await decide(svc, { method: "GET", path: "/v1/roles", token: fresh })).json.allow).toBe(true);

      const down = await serve(["--issuer", ISSUER, "--jwks", `${url}/jwks`, "--directory", directory]);
      const res = await down.fetch(`/ready`);
      expect(res.status).toBe(503);
      expect((await json<ReadyJson>(res)).missing[0]).toMatch(/^keys: /);
      const d = await decide(down, { method: "GET", path: "/v1/roles", token });
      expect(d.json).toMatchObject({ allow: false, status: 401 });
      expect((await down.fetch(`/health`)).status).toBe(200);
    },
    60_000,
  );
});

describe("role sources and modes", () => {
  it("--roles-claim reads roles from the token (labels mapped), no directory needed", async () => {
    const { keys, jwks } = await setup();
    const svc = await serve(["--issuer", ISSUER, "--jwks", jwks, "--roles-claim", "roles"]);
    const t = await userToken(keys, UNSYNCED, { roles: ["Enseignant adulte"] });
    expect((await decide(svc, { method: "GET", path: "/v2/ORG001/elevesAdultes", token: t })).json).toMatchObject({
      allow: true,
      subject: { roles: ["enseignant_adulte"] },
    });
    const none = await userToken(keys, UNSYNCED);
    expect((await decide(svc, { method: "GET", path: "/v1/roles", token: none })).json.reason).toBe("not_synced");
  }, 60_000);

  it("--role-check audit allows and reports would_deny", async () => {
    const { keys, jwks, directory } = await setup();
    const svc = await serve(["--issuer", ISSUER, "--jwks", jwks, "--directory", directory, "--role-check", "audit"]);
    const t = await userToken(keys, TEACHER);
    const { json } = await decide(svc, { method: "GET", path: "/v2/ORG001/elevesAdultes", token: t });
    expect(json).toMatchObject({ allow: true, mode: "audit", would_deny: { reason: "role_not_allowed" } });
  }, 60_000);
});

describe("--workers 2 (node:cluster)", () => {
  it("two processes share the port", async () => {
    const { keys, jwks, directory } = await setup();
    // node:cluster needs its own process: the real `portier serve`, on a real port.
    const svc = await startServe(["--issuer", ISSUER, "--jwks", jwks, "--directory", directory, "--workers", "2"]);
    running.push(svc);
    const t = await userToken(keys, TEACHER);
    const pids = new Set<number>();
    await until(
      async () => {
        const res = await fetch(`${svc.url}/decide`, {
          method: "POST",
          headers: { "content-type": "application/json", connection: "close" },
          body: JSON.stringify({ method: "GET", path: "/v1/roles", token: t }),
        });
        expect((await json<DecideJson>(res)).allow).toBe(true);
        const lines = svc
          .output()
          .split("\n")
          .filter((l) => l.includes('"msg":"decision"'));
        for (const l of lines) pids.add((JSON.parse(l) as { pid: number }).pid);
        return pids.size >= 2;
      },
      20_000,
      20,
    );
    expect(pids.size).toBe(2);
  }, 60_000);
});
