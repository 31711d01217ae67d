/**
 * Reloads through the real `portier serve`: a key removed from --jwks FILE stops verifying; a later 304
 * clears a failed --bundle-url poll from /ready and metrics; an empty or shrunken directory is refused;
 * a bundle bomb is refused under --bundle-max-bytes while the old policy serves; configured URLs never show
 * their secrets in /ready, /metrics or the logs.
 */
import { afterEach, describe, expect, it } from "vitest";
import { renameSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createGzip } from "node:zlib";
import { join } from "node:path";
import { bundleWithRevision } from "./bundles.js";
import { ISSUER, RECORDS, TEACHER, ADULT_STUDENT, decide, makeKeys, serveInProcess, tempDir, until, userToken, writeDirectory, type InProcessService } from "./helpers.js";
import { sealNdjson } from "../support/directory-files.js";

const running: InProcessService[] = [];
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => (s.closeAllConnections(), s.close(r)))));
});

async function serve(args: string[]): Promise<InProcessService> {
  // Application-only unless the case names a directory (the service refuses to start without a source of roles).
  const s = await serveInProcess(args.includes("--directory") || args.includes("--roles-claim") ? args : [...args, "--no-directory"]);
  running.push(s);
  return s;
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function replace(file: string, text: string): void {
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
}

/** A key pair and its JWKS written to a file in a fresh folder. */
async function keyFile() {
  const keys = await makeKeys();
  const dir = tempDir();
  const jwks = join(dir, "jwks.json");
  writeFileSync(jwks, JSON.stringify(keys.jwks));
  return { keys, dir, jwks };
}

const ready = async (url: string) => (await fetch(`${url}/ready`)).json() as Promise<any>;
const metrics = async (url: string) => (await fetch(`${url}/metrics`)).text();
const ROLES_PATH = "/v1/roles";

describe("--jwks FILE", () => {
  it("a key removed from the file stops verifying, for new and cached tokens alike", async () => {
    const k1 = await makeKeys("k1");
    const k2 = await makeKeys("k2");
    const dir = tempDir();
    const jwks = join(dir, "jwks.json");
    writeFileSync(jwks, JSON.stringify({ keys: [...k1.jwks.keys, ...k2.jwks.keys] }));
    const directory = writeDirectory(dir, RECORDS);
    const svc = await serve(["--issuer", ISSUER, "--jwks", jwks, "--directory", directory]);
    const cached = await userToken(k1, TEACHER);
    expect((await decide(svc.url, { method: "GET", path: ROLES_PATH, token: cached })).json.allow).toBe(true);
    expect((await decide(svc.url, { method: "GET", path: ROLES_PATH, token: cached })).json.allow).toBe(true);

    replace(jwks, JSON.stringify(k2.jwks));
    await until(async () => (await ready(svc.url)).keys.keyCount === 1);
    expect((await decide(svc.url, { method: "GET", path: ROLES_PATH, token: cached })).json).toMatchObject({ allow: false, status: 401, reason: "kid_unknown" });
    const fresh = await userToken(k1, TEACHER, { jti: "fresh" });
    expect((await decide(svc.url, { method: "GET", path: ROLES_PATH, token: fresh })).json).toMatchObject({ allow: false, reason: "kid_unknown" });
    expect((await decide(svc.url, { method: "GET", path: ROLES_PATH, token: await userToken(k2, TEACHER) })).json.allow).toBe(true);
  }, 60_000);
});

describe("--bundle-url status", () => {
  it("a 304 after a failed poll clears the error from /ready and metrics", async () => {
    const { keys, dir, jwks } = await keyFile();
    const body = await bundleWithRevision("r-1");
    let mode: "ok" | "fail" = "ok";
    let failures = 0;
    let notModified = 0;
    const host = await listen((req, res) => {
      if (mode === "fail") return (failures++, res.writeHead(503).end());
      if (req.headers["if-none-match"] === '"r-1"') return (notModified++, res.writeHead(304).end());
      res.writeHead(200, { etag: '"r-1"' }).end(body);
    });
    const svc = await serve(["--issuer", ISSUER, "--jwks", jwks, "--bundle-url", `http://${host}/b.tar.gz`, "--bundle-poll-seconds", "0.1"]);
    await until(() => notModified > 0);
    mode = "fail";
    await until(async () => failures > 0 && (await metrics(svc.url)).includes("portier_policy_last_load_failed 1"));
    let r = await ready(svc.url);
    expect(r.problems.join()).toContain("policy: last reload refused, revision r-1 keeps serving");
    mode = "ok";
    // Back-off after the failures: wait until the server has answered 304 twice more.
    const seen = notModified;
    await until(() => notModified >= seen + 2, 20_000);
    r = await ready(svc.url);
    expect(r.problems).toEqual([]);
    expect(r.policy.lastError).toBeUndefined();
    expect(r.policy).toMatchObject({ revision: "r-1", loaded: true, lastHttpCode: 304 });
    expect(r.policy.lastSuccessfulRequest >= r.policy.lastSuccessfulActivation).toBe(true);
    expect(await metrics(svc.url)).toContain("portier_policy_last_load_failed 0");
  }, 60_000);
});

describe("directory guards", () => {
  it("an empty or invalid directory, or one that shrinks too much, is refused; the old index serves; --allow-directory-shrink accepts", async () => {
    const { keys, dir, jwks } = await keyFile();
    const directory = writeDirectory(dir, RECORDS);
    const svc = await serve(["--issuer", ISSUER, "--jwks", jwks, "--directory", directory, "--directory-max-shrink", "0.25"]);
    const token = await userToken(keys, TEACHER);
    // Sealed but empty, sealed with no valid record, unsealed (a feed still being written), all invalid, a shrink.
    for (const [i, text] of [sealNdjson([]), sealNdjson(["{}"]), "  \n", JSON.stringify([{ sub: TEACHER, tenant_id: "t", roles: [7] }]), JSON.stringify([RECORDS[1]])].entries()) {
      replace(directory, text);
      await until(async () => (await ready(svc.url)).directory.reloadFailures === i + 1);
      const r = await ready(svc.url);
      expect(r.ready).toBe(true);
      expect(r.directory.size).toBe(2);
      expect(r.problems.join()).toMatch(/directory: last reload refused, previous index keeps serving: /);
      expect((await decide(svc.url, { method: "GET", path: ROLES_PATH, token })).json.allow).toBe(true);
    }
    expect((await ready(svc.url)).directory.lastError).toContain("drops 50% of the records (2 -> 1), more than the 25% allowed by --directory-max-shrink");
    expect(await metrics(svc.url)).toContain("portier_directory_last_load_failed 1");
    await until(() => svc.output().includes('"event":"directory_refused"'));

    const allowing = await serve(["--issuer", ISSUER, "--jwks", jwks, "--directory", writeDirectory(tempDir(), RECORDS), "--allow-directory-shrink", "true"]);
    const file = (await ready(allowing.url)).directory.file as string;
    replace(file, JSON.stringify([RECORDS[1]]));
    await until(async () => (await ready(allowing.url)).directory.size === 1);
    expect((await decide(allowing.url, { method: "GET", path: ROLES_PATH, token })).json.reason).toBe("not_synced");
    expect((await decide(allowing.url, { method: "GET", path: ROLES_PATH, token: await userToken(keys, ADULT_STUDENT) })).json.allow).toBe(true);
  }, 90_000);
});

describe("--directory-shrink-window-seconds", () => {
  const users = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => ({ sub: `${prefix}-${i}`, tenant_id: RECORDS[0]!.tenant_id, roles: ["enseignant_jeune"] }));

  for (const [window, refusedAt] of [[undefined, 4], ["0", undefined]] as const) {
    it(`${window === undefined ? "by default (a day)" : `set to ${window}`}: 10 -> 7 -> 5 -> 4 ${refusedAt ? "stops at 4" : "is accepted step by step"}`, async () => {
      const { jwks, dir } = await keyFile();
      const directory = writeDirectory(dir, users(10, "s10"));
      const svc = await serve(["--issuer", ISSUER, "--jwks", jwks, "--directory", directory, "--watch", "false", ...(window === undefined ? [] : ["--directory-shrink-window-seconds", window])]);
      for (const n of [7, 5, 4]) {
        replace(directory, JSON.stringify(users(n, `s${n}`)));
        expect(await svc.service.directory!.reload(), `${n} records`).toBe(n !== refusedAt);
      }
      if (refusedAt) expect(svc.service.directory!.status().lastError).toMatch(/drops 60% of the records \(10, the largest accepted in the last 86400 s \(now 5\), -> 4\)/);
    });
  }
});

describe("--bundle-max-bytes", () => {
  it("a bundle bomb from the bundle server is refused while inflating; the old policy keeps serving", async () => {
    const { keys, dir, jwks } = await keyFile();
    const good = await bundleWithRevision("before-bomb");
    const gz = createGzip({ level: 9 });
    const parts: Buffer[] = [];
    gz.on("data", (c: Buffer) => parts.push(c));
    const ended = new Promise((r) => gz.on("end", r));
    for (let i = 0; i < 64; i++) gz.write(Buffer.alloc(1 << 20));
    gz.end();
    await ended;
    const bomb = Buffer.concat(parts);
    let serveBomb = false;
    const host = await listen((req, res) => {
      if (serveBomb) return res.writeHead(200, { etag: '"bomb"' }).end(bomb);
      if (req.headers["if-none-match"] === '"good"') return res.writeHead(304).end();
      res.writeHead(200, { etag: '"good"' }).end(good);
    });
    const svc = await serve(["--issuer", ISSUER, "--jwks", jwks, "--bundle-url", `http://${host}/b.tar.gz`, "--bundle-poll-seconds", "0.2", "--bundle-max-bytes", "4194304"]);
    expect((await ready(svc.url)).policy.revision).toBe("before-bomb");
    serveBomb = true;
    await until(async () => /inflates to more than 4194304 bytes/.test((await ready(svc.url)).policy.lastError ?? ""));
    expect((await ready(svc.url)).policy.revision).toBe("before-bomb");
    expect((await fetch(`${svc.url}/health`)).status).toBe(200);
    const token = await userToken(keys, TEACHER);
    expect((await decide(svc.url, { method: "GET", path: ROLES_PATH, token })).json.reason).toBe("not_synced");
  }, 60_000);
});

describe("secrets in configured URLs", () => {
  it("never appear in /ready, /metrics, error messages or logs", async () => {
    const keys = await makeKeys();
    const body = await bundleWithRevision("secret-free");
    const basic = `Basic ${Buffer.from("ops:PASSW0RD").toString("base64")}`;
    let bundleDown = false;
    const host = await listen((req, res) => {
      if (req.url?.startsWith("/jwks")) return res.writeHead(503).end();
      if (req.headers.authorization !== basic) return res.writeHead(401).end();
      if (bundleDown) return res.writeHead(500).end();
      res.writeHead(200, { etag: '"s"' }).end(body);
    });
    const svc = await serve([
      "--issuer", ISSUER,
      "--jwks", `http://tok:JWKSUSERSECRET@${host}/jwks?api_key=APIKEYSECRET`,
      "--bundle-url", `http://ops:PASSW0RD@${host}/b.tar.gz?X-Amz-Signature=SIGSECRET&X-Amz-Credential=CREDSECRET`,
      "--bundle-poll-seconds", "0.1",
    ]);
    expect((await ready(svc.url)).policy.revision).toBe("secret-free");
    bundleDown = true;
    await until(async () => (await ready(svc.url)).policy.lastHttpCode === 500);
    const res = await fetch(`${svc.url}/ready`);
    expect(res.status).toBe(503);
    const shown = [await res.text(), await metrics(svc.url)];
    await until(() => svc.output().includes('"event":"policy_refused"') && svc.output().includes('"event":"keys_refused"'));
    shown.push(svc.output(), svc.stderr());
    const all = shown.join("\n");
    for (const secret of ["PASSW0RD", "SIGSECRET", "CREDSECRET", "APIKEYSECRET", "JWKSUSERSECRET"]) expect(all).not.toContain(secret);
    expect(all).toContain(`http://***@${host}/b.tar.gz?X-Amz-Signature=***&X-Amz-Credential=***`);
    expect(all).toContain(`http://***@${host}/jwks?api_key=***`);
  }, 60_000);
});
