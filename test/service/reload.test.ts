/**
 * Reloads through the real `portier serve` (startService in this process; its requests over an in-memory
 * connection, inject.ts; the issuer and bundle servers it fetches from are real sockets): a key removed from --jwks
 * FILE stops verifying; a later 304
 * clears a failed --bundle-url poll from /ready and metrics; an empty or shrunken directory is refused;
 * a watched bundle or JWKS file replaced by a link to /dev/zero is refused unread while the old one serves;
 * a bundle bomb is refused under --bundle-max-bytes while the old policy serves; configured URLs never show
 * their secrets in /ready, /metrics or the logs.
 */
import { afterEach, describe, expect, it } from "vitest";
import { renameSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createGzip } from "node:zlib";
import { join } from "node:path";
import { bundleWithRevision } from "./bundles.js";
import { freePort } from "../support/free-port.js";
import { UNLOADED_RETRY_MS } from "../../src/auth/key-store.js";
import {
  ISSUER,
  RECORDS,
  TEACHER,
  ADULT_STUDENT,
  makeKeys,
  tempDir,
  until,
  userToken,
  writeDirectory,
} from "./helpers.js";
import { decide, serveInjected, type InjectedService, type Injector } from "./inject.js";
import { sealNdjson } from "../support/directory-files.js";
import { json, type ReadyJson } from "../support/answers.js";
import { metricValue } from "../support/metrics.js";

const running: InjectedService[] = [];
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => (s.closeAllConnections(), s.close(r)))));
});

async function serve(args: string[]): Promise<InjectedService> {
  // Application-only unless the case names a directory (the service refuses to start without a source of roles).
  const s = await serveInjected(
    args.includes("--directory") || args.includes("--roles-claim") ? args : [...args, "--no-directory"],
  );
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

const ready = async (svc: Injector) => json<ReadyJson>(await svc.fetch("/ready"));
const metrics = async (svc: Injector) => (await svc.fetch("/metrics")).text();
const LOAD_FAILED = "portier_policy_last_load_failed";
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
    expect((await decide(svc, { method: "GET", path: ROLES_PATH, token: cached })).json.allow).toBe(true);
    expect((await decide(svc, { method: "GET", path: ROLES_PATH, token: cached })).json.allow).toBe(true);

    replace(jwks, JSON.stringify(k2.jwks));
    await until(async () => (await ready(svc)).keys.keyCount === 1);
    expect((await decide(svc, { method: "GET", path: ROLES_PATH, token: cached })).json).toMatchObject({
      allow: false,
      status: 401,
      reason: "kid_unknown",
    });
    const fresh = await userToken(k1, TEACHER, { jti: "fresh" });
    expect((await decide(svc, { method: "GET", path: ROLES_PATH, token: fresh })).json).toMatchObject({
      allow: false,
      reason: "kid_unknown",
    });
    expect(
      (await decide(svc, { method: "GET", path: ROLES_PATH, token: await userToken(k2, TEACHER) })).json.allow,
    ).toBe(true);
  }, 60_000);

  // Issue 17 item 4: {"keys":[]} used to be accepted, /ready 200 with no problem while every token was kid_unknown.
  it.each([
    { why: "an empty key set", doc: () => ({ keys: [] }) },
    {
      why: "a set whose only key is for encryption",
      doc: (k: Awaited<ReturnType<typeof makeKeys>>) => ({ keys: [{ ...k.publicJwk, use: "enc" }] }),
    },
  ])(
    "$why is refused: the old keys keep verifying, /ready, metrics and the log report it",
    async ({ doc }) => {
      const { keys, jwks } = await keyFile();
      const svc = await serve(["--issuer", ISSUER, "--jwks", jwks]);
      const token = await userToken(keys, TEACHER);
      replace(jwks, JSON.stringify(doc(keys)));
      await until(async () => (await ready(svc)).keys.refreshFailures > 0);
      const res = await svc.fetch(`/ready`);
      const r = await json<ReadyJson>(res);
      expect(res.status).toBe(200);
      expect(r.keys).toMatchObject({ ready: true, keyCount: 1 });
      expect(r.problems.join("\n")).toMatch(
        /keys: last refresh failed, cached keys in use: the JWKS has no key usable to verify signatures/,
      );
      const text = await metrics(svc);
      expect(metricValue(text, "portier_keys_last_load_failed")).toBe(1);
      expect(metricValue(text, "portier_keys_reload_failures_total")).toBeGreaterThan(0);
      // The deprecated name answers the same for one release.
      expect(metricValue(text, "portier_keys_last_refresh_failed")).toBe(1);
      await until(() => svc.output().includes('"event":"keys_refused"'));
      expect((await decide(svc, { method: "GET", path: ROLES_PATH, token })).json).toMatchObject({
        allow: false,
        reason: "not_synced",
      });
    },
    60_000,
  );

  it("an empty key set at start is a start-up failure naming the file and the fix", async () => {
    const dir = tempDir();
    const jwks = join(dir, "jwks.json");
    writeFileSync(jwks, '{"keys":[]}');
    await expect(serve(["--issuer", ISSUER, "--jwks", jwks])).rejects.toThrow(
      new RegExp(
        String.raw`^config\.jwks: .*jwks\.json: the JWKS has no key usable to verify signatures \(0 ` +
          String.raw`keys\); .*\(pass a JWKS ` +
          String.raw`file: \{"keys": \[\.\.\.\]\}\)$`,
      ),
    );
  }, 60_000);
});

// Issue 17 item 5: keys from a URL that was down at start came 30 s after it answered again (the kid cooldown).
describe("keys from a URL that refuses connections at start", () => {
  it.each([
    {
      source: "--jwks URL",
      args: (origin: string) => ["--issuer", ISSUER, "--jwks", `${origin}/jwks`],
      iss: () => ISSUER,
    },
    { source: "discovery", args: (origin: string) => ["--issuer", origin], iss: (origin: string) => origin },
  ])(
    "$source: the first allow comes within the back-off bound of the issuer answering",
    async ({ args, iss }) => {
      const keys = await makeKeys();
      const port = await freePort();
      const origin = `http://127.0.0.1:${port}`;
      const svc = await serve([...args(origin), "--directory", writeDirectory(tempDir(), RECORDS)]);
      const token = await userToken(keys, TEACHER, { iss: iss(origin) });
      const allowed = async () => (await decide(svc, { method: "GET", path: ROLES_PATH, token })).json.allow === true;
      // Down: nothing listens on the port. A request meanwhile uses up the kid cooldown (one attempt per 30 s).
      await until(async () => (await ready(svc)).keys.refreshFailures >= 1, 10_000);
      expect((await decide(svc, { method: "GET", path: ROLES_PATH, token })).json.reason).toBe("keys_unavailable");
      expect((await ready(svc)).keys.lastError).toMatch(/ECONNREFUSED/);
      // Up again, from this moment.
      const server = createServer((req, res) => {
        if (req.url === "/.well-known/openid-configuration")
          return res
            .writeHead(200, { "content-type": "application/json" })
            .end(JSON.stringify({ issuer: origin, jwks_uri: `${origin}/jwks` }));
        if (req.url === "/jwks")
          return res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(keys.jwks));
        res.writeHead(404).end();
      });
      servers.push(server);
      await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
      const up = Date.now();
      await until(allowed, 20_000, 100);
      const waited = Date.now() - up;
      // The back-off is 1 s doubling to 10 s: the next retry is never more than 10 s away (here about 1-2 s).
      expect(waited).toBeLessThan(UNLOADED_RETRY_MS.max);
      expect((await ready(svc)).keys).toMatchObject({ ready: true, keyCount: 1 });
    },
    60_000,
  );
});

describe("--bundle-url status", () => {
  it("a 304 after a failed poll clears the error from /ready and metrics", async () => {
    const { jwks } = await keyFile();
    const body = await bundleWithRevision("r-1");
    let mode: "ok" | "fail" = "ok";
    let failures = 0;
    let notModified = 0;
    // The first failing answer is held until the test lets it go: the poll has reached the server (failures > 0)
    // but the service has not seen its answer yet, the instant a wait on the server's count alone stopped at.
    let holding = true;
    const held: (() => void)[] = [];
    const release = () => ((holding = false), held.splice(0).forEach((answer) => answer()));
    const host = await listen((req, res) => {
      if (mode === "fail") {
        failures++;
        const answer = () => void res.writeHead(503).end();
        return holding ? void held.push(answer) : answer();
      }
      if (req.headers["if-none-match"] === '"r-1"') return (notModified++, res.writeHead(304).end());
      res.writeHead(200, { etag: '"r-1"' }).end(body);
    });
    const svc = await serve([
      "--issuer",
      ISSUER,
      "--jwks",
      jwks,
      "--bundle-url",
      `http://${host}/b.tar.gz`,
      "--bundle-poll-seconds",
      "0.1",
    ]);
    await until(() => notModified > 0);
    mode = "fail";
    await until(() => failures > 0);
    // Until its answer arrives the poll has not failed, and /ready and metrics agree on it.
    expect(metricValue(await metrics(svc), LOAD_FAILED)).toBe(0);
    expect((await ready(svc)).problems).toEqual([]);
    release();
    await until(async () => metricValue(await metrics(svc), LOAD_FAILED) === 1);
    let r = await ready(svc);
    expect(r.problems.join()).toContain("policy: last reload refused, revision r-1 keeps serving");
    mode = "ok";
    // Back-off after the failures: wait until the server has answered 304 twice more.
    const seen = notModified;
    await until(() => notModified >= seen + 2, 20_000);
    r = await ready(svc);
    expect(r.problems).toEqual([]);
    expect(r.policy.lastError).toBeUndefined();
    expect(r.policy).toMatchObject({ revision: "r-1", loaded: true, lastHttpCode: 304 });
    expect(r.policy.lastSuccessfulRequest! >= r.policy.lastSuccessfulActivation!).toBe(true);
    expect(metricValue(await metrics(svc), LOAD_FAILED)).toBe(0);
  }, 60_000);

  // Issue 17 item 9: the ETag of a refused bundle is never sent back, so the server cannot answer 304 to it
  // (which would count as a success and clear the error): the same broken bundle is fetched again after back-off.
  it("a refused bundle is reported until a valid one loads; its ETag is not sent back", async () => {
    const { jwks } = await keyFile();
    const bundles = {
      "r-1": await bundleWithRevision("r-1"),
      broken: Buffer.from("not a bundle"),
      "r-2": await bundleWithRevision("r-2"),
    };
    let current: keyof typeof bundles = "r-1";
    const asked: { ifNoneMatch: string | undefined; served: string }[] = [];
    const host = await listen((req, res) => {
      const ifNoneMatch = req.headers["if-none-match"];
      if (ifNoneMatch === `"${current}"`) return (asked.push({ ifNoneMatch, served: "304" }), res.writeHead(304).end());
      asked.push({ ifNoneMatch, served: current });
      res.writeHead(200, { etag: `"${current}"` }).end(bundles[current]);
    });
    const svc = await serve([
      "--issuer",
      ISSUER,
      "--jwks",
      jwks,
      "--bundle-url",
      `http://${host}/b.tar.gz`,
      "--bundle-poll-seconds",
      "0.1",
    ]);
    await until(() => asked.some((a) => a.served === "304"));
    current = "broken";
    const brokenServed = () => asked.filter((a) => a.served === "broken").length;
    await until(() => brokenServed() >= 3, 20_000);
    const r = await ready(svc);
    expect(r.policy.revision).toBe("r-1");
    expect(r.problems.join()).toContain("policy: last reload refused, revision r-1 keeps serving");
    expect(metricValue(await metrics(svc), LOAD_FAILED)).toBe(1);
    const afterBroken = asked.slice(asked.findIndex((a) => a.served === "broken"));
    expect(
      afterBroken.map((a) => a.ifNoneMatch),
      JSON.stringify(asked),
    ).not.toContain('"broken"');
    expect(afterBroken.map((a) => a.served)).not.toContain("304");
    current = "r-2";
    await until(async () => (await ready(svc)).policy.revision === "r-2", 20_000);
    expect((await ready(svc)).problems).toEqual([]);
  }, 60_000);
});

describe("directory guards", () => {
  it(
    "an empty or invalid directory, or one that shrinks too much, is refused; the old index serves; " +
      "--allow-directory-shrink accepts",
    async () => {
      const { keys, dir, jwks } = await keyFile();
      const directory = writeDirectory(dir, RECORDS);
      const svc = await serve([
        "--issuer",
        ISSUER,
        "--jwks",
        jwks,
        "--directory",
        directory,
        "--directory-max-shrink",
        "0.25",
      ]);
      const token = await userToken(keys, TEACHER);
      // Sealed but empty, sealed with no valid record, unsealed (a feed still being written), all invalid, a shrink.
      for (const [i, text] of [
        sealNdjson([]),
        sealNdjson(["{}"]),
        "  \n",
        JSON.stringify([{ sub: TEACHER, tenant_id: "t", roles: [7] }]),
        JSON.stringify([RECORDS[1]]),
      ].entries()) {
        replace(directory, text);
        await until(async () => (await ready(svc)).directory.reloadFailures === i + 1);
        const r = await ready(svc);
        expect(r.ready).toBe(true);
        expect(r.directory.size).toBe(2);
        expect(r.problems.join()).toMatch(/directory: last reload refused, previous index keeps serving: /);
        expect((await decide(svc, { method: "GET", path: ROLES_PATH, token })).json.allow).toBe(true);
      }
      expect((await ready(svc)).directory.lastError).toContain(
        "drops 50% of the records (2 -> 1), more than the 25% allowed by --directory-max-shrink",
      );
      expect(metricValue(await metrics(svc), "portier_directory_last_load_failed")).toBe(1);
      await until(() => svc.output().includes('"event":"directory_refused"'));

      const allowing = await serve([
        "--issuer",
        ISSUER,
        "--jwks",
        jwks,
        "--directory",
        writeDirectory(tempDir(), RECORDS),
        "--allow-directory-shrink",
      ]);
      const file = (await ready(allowing)).directory.file as string;
      replace(file, JSON.stringify([RECORDS[1]]));
      await until(async () => (await ready(allowing)).directory.size === 1);
      expect((await decide(allowing, { method: "GET", path: ROLES_PATH, token })).json.reason).toBe("not_synced");
      expect(
        (await decide(allowing, { method: "GET", path: ROLES_PATH, token: await userToken(keys, ADULT_STUDENT) })).json
          .allow,
      ).toBe(true);
    },
    90_000,
  );
});

describe("--directory-shrink-window-seconds", () => {
  const users = (n: number, prefix: string) =>
    Array.from({ length: n }, (_, i) => ({
      sub: `${prefix}-${i}`,
      tenant_id: RECORDS[0]!.tenant_id,
      roles: ["enseignant_jeune"],
    }));

  for (const [window, refusedAt] of [
    [undefined, 4],
    ["0", undefined],
  ] as const) {
    it(
      `${window === undefined ? "by default (a day)" : `set to ${window}`}: 10 -> 7 -> 5 -> ` +
        `4 ${refusedAt ? "stops at 4" : "is accepted step by step"}`,
      async () => {
        const { jwks, dir } = await keyFile();
        const directory = writeDirectory(dir, users(10, "s10"));
        const svc = await serve([
          "--issuer",
          ISSUER,
          "--jwks",
          jwks,
          "--directory",
          directory,
          "--no-watch",
          ...(window === undefined ? [] : ["--directory-shrink-window-seconds", window]),
        ]);
        for (const n of [7, 5, 4]) {
          replace(directory, JSON.stringify(users(n, `s${n}`)));
          expect(await svc.service.directory!.reload(), `${n} records`).toBe(n !== refusedAt);
        }
        if (refusedAt)
          expect(svc.service.directory!.status().lastError).toMatch(
            /drops 60% of the records \(10, the largest accepted in the last 86400 s \(now 5\), -> 4\)/,
          );
      },
    );
  }
});

describe("a watched file replaced by a link to a device", () => {
  // /dev/zero never ends: read, it would fill the memory. It is refused unread, and what was loaded keeps serving.
  const toDevice = (file: string) => {
    symlinkSync("/dev/zero", `${file}.link`);
    renameSync(`${file}.link`, file);
  };

  it("--bundle: refused, the old policy serves, /ready and the metric report it", async () => {
    const { jwks, dir } = await keyFile();
    const bundle = join(dir, "bundle.tar.gz");
    writeFileSync(bundle, await bundleWithRevision("before-device"));
    const svc = await serve(["--issuer", ISSUER, "--jwks", jwks, "--bundle", bundle]);
    expect((await ready(svc)).policy.revision).toBe("before-device");
    toDevice(bundle);
    await until(async () => /not a regular file/.test((await ready(svc)).policy.lastError ?? ""), 20_000);
    const r = await ready(svc);
    expect(r.policy.lastError).toBe(`${bundle}: not a regular file (a character device)`);
    expect(r.policy.revision).toBe("before-device");
    expect(metricValue(await metrics(svc), LOAD_FAILED)).toBe(1);
  }, 60_000);

  it("--jwks FILE: refused, the loaded keys keep verifying", async () => {
    const { keys, jwks } = await keyFile();
    const svc = await serve(["--issuer", ISSUER, "--jwks", jwks]);
    toDevice(jwks);
    await until(async () => (await ready(svc)).keys.refreshFailures > 0, 20_000);
    const r = await ready(svc);
    expect(r.keys).toMatchObject({ ready: true, keyCount: 1 });
    expect(r.problems.join("\n")).toContain("not a regular file (a character device)");
    const token = await userToken(keys, TEACHER);
    expect((await decide(svc, { method: "GET", path: ROLES_PATH, token })).json).toMatchObject({
      reason: "not_synced",
    });
  }, 60_000);
});

describe("--bundle-max-bytes", () => {
  it("a bundle bomb from the bundle server is refused while inflating; the old policy keeps serving", async () => {
    const { keys, jwks } = await keyFile();
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
    const svc = await serve([
      "--issuer",
      ISSUER,
      "--jwks",
      jwks,
      "--bundle-url",
      `http://${host}/b.tar.gz`,
      "--bundle-poll-seconds",
      "0.2",
      "--bundle-max-bytes",
      "4194304",
    ]);
    expect((await ready(svc)).policy.revision).toBe("before-bomb");
    serveBomb = true;
    await until(async () => /inflates to more than 4194304 bytes/.test((await ready(svc)).policy.lastError ?? ""));
    expect((await ready(svc)).policy.revision).toBe("before-bomb");
    expect((await svc.fetch(`/health`)).status).toBe(200);
    const token = await userToken(keys, TEACHER);
    expect((await decide(svc, { method: "GET", path: ROLES_PATH, token })).json.reason).toBe("not_synced");
  }, 60_000);
});

describe("secrets in configured URLs", () => {
  it("never appear in /ready, /metrics, error messages or logs", async () => {
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
      "--issuer",
      ISSUER,
      "--jwks",
      `http://tok:JWKSUSERSECRET@${host}/jwks?api_key=APIKEYSECRET`,
      "--bundle-url",
      `http://ops:PASSW0RD@${host}/b.tar.gz?X-Amz-Signature=SIGSECRET&X-Amz-Credential=CREDSECRET`,
      "--bundle-poll-seconds",
      "0.1",
    ]);
    expect((await ready(svc)).policy.revision).toBe("secret-free");
    bundleDown = true;
    await until(async () => (await ready(svc)).policy.lastHttpCode === 500);
    const res = await svc.fetch(`/ready`);
    expect(res.status).toBe(503);
    const shown = [await res.text(), await metrics(svc)];
    await until(
      () => svc.output().includes('"event":"policy_refused"') && svc.output().includes('"event":"keys_refused"'),
    );
    shown.push(svc.output(), svc.stderr());
    const all = shown.join("\n");
    for (const secret of ["PASSW0RD", "SIGSECRET", "CREDSECRET", "APIKEYSECRET", "JWKSUSERSECRET"])
      expect(all).not.toContain(secret);
    expect(all).toContain(`http://***@${host}/b.tar.gz?X-Amz-Signature=***&X-Amz-Credential=***`);
    expect(all).toContain(`http://***@${host}/jwks?api_key=***`);
  }, 60_000);
});
