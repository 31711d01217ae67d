/**
 * The service's process life, with real processes in their own process group: SIGTERM while requests are
 * in flight (every one answered, exit 0, no process left) in every mode; start-up failures (one line on
 * stderr, non-zero exit, nothing hangs or stays; what each failure says is checked in process); worker crashes
 * (replaced with back-off, a crash loop ends
 * the service, the primary's death ends the workers).
 */
import { afterAll, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { copyFileSync, unlinkSync, writeFileSync } from "node:fs";
import { request, type IncomingMessage } from "node:http";
import { createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { BUNDLE } from "./bundles.js";
import { ISSUER, machineToken, makeKeys, serveInProcess, tempDir, until } from "./helpers.js";
import { killAllGroups, startGroup, untilGone, type PortierGroup } from "./process-group.js";

// Each test has its own process group and ports, so they run concurrently: most of their time is waiting
// (grace periods, back-offs, start-up). Tests that pass leave no process (they check it); this kills what a
// failing one left behind.
afterAll(() => killAllGroups());

const keys = await makeKeys();
const dir = tempDir();
const jwks = join(dir, "jwks.json");
writeFileSync(jwks, JSON.stringify(keys.jwks));
// A FIFO nobody writes to: opening it to read would wait for a writer, for ever.
const fifo = join(dir, "fifo");
execFileSync("mkfifo", [fifo]);
const serveArgs = (workers: number, extra: string[] = []) => [
  "serve",
  "--issuer",
  ISSUER,
  "--jwks",
  jwks,
  "--no-directory",
  "--port",
  "0",
  "--workers",
  String(workers),
  ...extra,
];

const MODES = [
  { mode: "serve --workers 1", args: (extra: string[] = []) => serveArgs(1, extra), signalGroup: false },
  { mode: "serve --workers 2", args: (extra: string[] = []) => serveArgs(2, extra), signalGroup: true },
  {
    mode: "dev (make run)",
    args: (extra: string[] = []) => ["dev", "--port", "0", "--issuer-port", "0", "--callback-port", "0", ...extra],
    signalGroup: true,
  },
];

async function listeningUrl(g: PortierGroup): Promise<string> {
  await g.waitFor(/"msg":"listening"/);
  const line = g
    .stdout()
    .split("\n")
    .find((l) => l.includes('"msg":"listening"')) as string;
  return (JSON.parse(line) as { url: string }).url;
}

interface Pending {
  finish(): void;
  answer: Promise<{ status: number; body: string }>;
}

/** A POST /decide whose headers and first bytes are sent now and the rest on finish(): a request in flight. */
function pendingDecide(url: string, body: unknown): Pending {
  const u = new URL(url);
  const payload = JSON.stringify(body);
  const req = request({
    host: u.hostname,
    port: u.port,
    path: "/decide",
    method: "POST",
    agent: false,
    headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload) },
  });
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.on("response", (res: IncomingMessage) => {
      let text = "";
      res.on("data", (d: Buffer) => (text += d.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on("error", reject);
    });
    req.on("error", reject);
  });
  req.write(payload.slice(0, 10));
  return { finish: () => req.end(payload.slice(10)), answer };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function signal(g: PortierGroup, sig: NodeJS.Signals, group: boolean): void {
  process.kill(group ? -g.pgid : g.pgid, sig);
}

describe.concurrent.each(MODES)("SIGTERM with requests in flight: $mode", ({ args, signalGroup }) => {
  it("answers every request in flight, closes idle keep-alive connections, exits 0, leaves no process", async () => {
    const g = startGroup(args());
    const url = await listeningUrl(g);
    const token = await machineToken(keys);
    // An idle keep-alive connection must not hold the service open.
    const idle = await fetch(`${url}/health`, { headers: { connection: "keep-alive" } });
    expect(idle.status).toBe(200);
    const pending = Array.from({ length: 4 }, () => pendingDecide(url, { method: "GET", path: "/v1/roles", token }));
    await sleep(500);
    signal(g, "SIGTERM", signalGroup);
    await sleep(700);
    for (const p of pending) p.finish();
    const answers = await Promise.all(pending.map((p) => p.answer));
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect(JSON.parse(a.body)).toHaveProperty("allow");
    }
    expect(await Promise.race([g.exited, sleep(15_000).then(() => "still running")])).toBe(0);
    expect(await untilGone(g.pgid, 5000)).toEqual([]);
    expect(g.stderr()).toBe("");
  }, 60_000);
});

describe.concurrent.each(MODES.slice(0, 2))("--shutdown-timeout: $mode", ({ args }) => {
  it("a request that never completes is cut after the timeout and the service still exits 0", async () => {
    const g = startGroup(args(["--shutdown-timeout", "1"]));
    const url = await listeningUrl(g);
    const stalled = pendingDecide(url, { method: "GET", path: "/v1/roles", token: "x" });
    const cut = stalled.answer.then(
      () => "answered",
      () => "cut",
    );
    await sleep(500);
    const start = Date.now();
    signal(g, "SIGTERM", false);
    expect(await Promise.race([g.exited, sleep(10_000).then(() => "still running")])).toBe(0);
    expect(Date.now() - start).toBeGreaterThanOrEqual(900);
    expect(await cut).toBe("cut");
    expect(await untilGone(g.pgid, 5000)).toEqual([]);
  }, 60_000);
});

const busy: Server[] = [];
afterAll(() => busy.forEach((s) => s.close()));

async function busyPort(): Promise<number> {
  const s = createServer();
  busy.push(s);
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
  return (s.address() as { port: number }).port;
}

async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** Each start-up failure and the one line it prints after "portier serve: ". */
const FAILURES: { name: string; args: () => Promise<string[]>; message: RegExp }[] = [
  {
    name: "port in use",
    args: async () => ["--port", String(await busyPort())],
    message:
      /^cannot listen on 127\.0\.0\.1:\d+: the address is in use by another process; stop it or choose another --port$/,
  },
  {
    name: "missing bundle",
    args: async () => ["--bundle", join(dir, "none.tar.gz")],
    message:
      /^config\.bundle: file not found: .*none\.tar\.gz \(run make build, or pass --bundle FILE or --bundle-url URL\)$/,
  },
  {
    name: "broken bundle",
    args: async () => (
      writeFileSync(join(dir, "broken.tar.gz"), "not a bundle"),
      ["--bundle", join(dir, "broken.tar.gz")]
    ),
    message: /^config\.bundle: .*broken\.tar\.gz/,
  },
  {
    name: "broken JWKS file",
    args: async () => (
      writeFileSync(join(dir, "broken-jwks.json"), "{ not json"),
      ["--jwks", join(dir, "broken-jwks.json")]
    ),
    message: /^config\.jwks: .*broken-jwks\.json: .*JSON/,
  },
  {
    name: "missing JWKS file",
    args: async () => ["--jwks", join(dir, "none.json")],
    message: /^config\.jwks: file not found: .*none\.json/,
  },
  {
    name: "unreachable issuer with --require-keys-at-start",
    args: async () => ["--jwks", `http://127.0.0.1:${await closedPort()}/jwks`, "--require-keys-at-start"],
    message: new RegExp(
      String.raw`^issuer keys: cannot load them from http:\/\/127\.0\.0\.1:\d+\/jwks: GET ` +
        String.raw`http:\/\/127\.0\.0\.1:\d+\/jwks ` +
        String.raw`failed: ECONNREFUSED`,
    ),
  },
  {
    name: "missing directory file",
    args: async () => ["--directory", join(dir, "none.ndjson")],
    message: /^config\.directory: file not found: .*none\.ndjson/,
  },
  // A file input that is not a regular file is refused without reading it: /dev/zero would fill the memory, a
  // FIFO hold the start (and the process's signals) for ever.
  {
    name: "bundle that is a device",
    args: async () => ["--bundle", "/dev/zero"],
    message: /^config\.bundle: \/dev\/zero: not a regular file \(a character device\)$/,
  },
  {
    name: "bundle that is a FIFO",
    args: async () => ["--bundle", fifo],
    message: /^config\.bundle: .*fifo: not a regular file \(a FIFO\)$/,
  },
  {
    name: "JWKS file that is a FIFO",
    args: async () => ["--jwks", fifo],
    message: /^config\.jwks: .*fifo: not a regular file \(a FIFO\) \(pass a JWKS file: \{"keys": \[\.\.\.\]\}\)$/,
  },
  {
    name: "directory file that is a device",
    args: async () => ["--directory", "/dev/zero"],
    message: /^config\.directory: \/dev\/zero: not a regular file \(a character device\)$/,
  },
  {
    name: "verification key that is a FIFO",
    args: async () => ["--verification-key", fifo],
    message: /^config\.verificationKey: .*fifo: not a regular file \(a FIFO\)$/,
  },
  {
    name: "decision-log token file that is a device",
    args: async () => ["--decision-log-url", "http://127.0.0.1:9/logs", "--decision-log-token-file", "/dev/zero"],
    message: new RegExp(
      String.raw`^config\.decisionLogTokenFile: \/dev\/zero: not a regular file \(a character device\); ` +
        String.raw`it must hold one ` +
        String.raw`bearer token$`,
    ),
  },
];
const stderrLine = (message: RegExp) => new RegExp(`^portier serve: ${message.source.slice(1)}`);

async function expectStartFailure(g: PortierGroup, code: number, stderr: RegExp): Promise<void> {
  expect(await Promise.race([g.exited, sleep(30_000).then(() => "hung")])).toBe(code);
  const lines = g.stderr().split("\n").filter(Boolean);
  expect(lines, `stderr:\n${g.stderr()}`).toHaveLength(1);
  expect(lines[0]).toMatch(stderr);
  expect(g.stdout()).not.toContain('"msg":"listening"');
  expect(await untilGone(g.pgid, 5000)).toEqual([]);
}

// What each failure says, in process (startService refuses to start with that message); what the process does
// with it (one line on stderr, exit 1, no process left), with real processes for a few of them in each mode.
describe("start-up failures: the message", () => {
  it.each(FAILURES)("$name", async ({ args: extra, message }) => {
    const args = ["--issuer", ISSUER, "--jwks", jwks, ...(await extra())];
    await expect(serveInProcess(args.includes("--directory") ? args : [...args, "--no-directory"])).rejects.toThrow(
      message,
    );
  });
});

describe.concurrent.each([
  { mode: "serve --workers 1", workers: 1, failures: ["port in use", "bundle that is a device"] },
  {
    mode: "serve --workers 2",
    workers: 2,
    failures: ["port in use", "missing directory file", "bundle that is a FIFO"],
  },
])("start-up failures: $mode", ({ workers, failures }) => {
  it.each(FAILURES.filter((f) => failures.includes(f.name)))(
    "$name: one line on stderr, exit 2, no process left",
    async ({ args: extra, message }) => {
      const args = serveArgs(workers, await extra());
      const g = startGroup(args.includes("--directory") ? args.filter((a) => a !== "--no-directory") : args);
      await expectStartFailure(g, 2, stderrLine(message));
    },
    45_000,
  );
});

describe.concurrent.each([
  { ...MODES[0]!, stderr: "portier serve: stopped by SIGTERM while starting\n" },
  { ...MODES[1]!, stderr: "" },
])("a stop during start-up: $mode", ({ args, signalGroup, stderr }) => {
  it("SIGTERM while the start waits on a key server that never answers ends the process at once, exit 0", async () => {
    // --require-keys-at-start makes the start wait for the keys (until the fetch's timeout): the operator's stop
    // must not wait with it.
    const connections: Socket[] = [];
    const stalled = createServer((s) => void connections.push(s));
    await new Promise<void>((r) => stalled.listen(0, "127.0.0.1", r));
    try {
      const port = (stalled.address() as AddressInfo).port;
      const g = startGroup(args(["--jwks", `http://127.0.0.1:${port}/jwks`, "--require-keys-at-start"]));
      await until(() => connections.length > 0, 20_000);
      signal(g, "SIGTERM", signalGroup);
      expect(await Promise.race([g.exited, sleep(2000).then(() => "still starting")])).toBe(0);
      expect(g.stdout()).not.toContain('"msg":"listening"');
      expect(g.stderr()).toBe(stderr);
      expect(await untilGone(g.pgid, 5000)).toEqual([]);
    } finally {
      for (const s of connections) s.destroy();
      stalled.close();
    }
  }, 45_000);
});

describe.concurrent("start-up failures: dev (make run)", () => {
  it.each([
    [
      "--port",
      new RegExp(
        String.raw`^portier dev: cannot listen on 127\.0\.0\.1:\d+: the address is in use by another ` +
          String.raw`process; stop it or ` +
          String.raw`choose another --port$`,
      ),
    ],
    [
      "--issuer-port",
      new RegExp(
        String.raw`^portier dev: cannot start the issuer on 127\.0\.0\.1:\d+: the address is in use by ` +
          String.raw`another process; stop ` +
          String.raw`it or choose another --issuer-port$`,
      ),
    ],
    [
      "--callback-port",
      new RegExp(
        String.raw`^portier dev: cannot start the callback server on 127\.0\.0\.1:\d+: the address is in ` +
          String.raw`use by another ` +
          String.raw`process; stop it or choose another --callback-port$`,
      ),
    ],
  ] as const)(
    "%s in use: one line, exit 2, no process left",
    async (flag, stderr) => {
      const port = String(await busyPort());
      const on = (f: string) => (flag === f ? port : "0");
      const g = startGroup([
        "dev",
        "--port",
        on("--port"),
        "--issuer-port",
        on("--issuer-port"),
        "--callback-port",
        on("--callback-port"),
      ]);
      await expectStartFailure(g, 2, stderr);
    },
    45_000,
  );
});

describe("refusing to deny every user call", () => {
  it(
    "neither --directory nor --roles-claim: exit 2 naming --no-directory; --no-directory with --roles-claim: exit " +
      "2",
    async () => {
      const g = startGroup(["serve", "--issuer", ISSUER, "--jwks", jwks, "--port", "0", "--workers", "1"]);
      expect(await Promise.race([g.exited, sleep(30_000).then(() => "hung")])).toBe(2);
      expect(g.stderr()).toMatch(
        new RegExp(
          String.raw`^portier serve: config: neither --directory nor --roles-claim is set, so every user ` +
            String.raw`call would be denied ` +
            String.raw`\(not_synced\); .*--no-directory for an application-only deployment$`,
          "m",
        ),
      );
      const both = startGroup([
        "serve",
        "--issuer",
        ISSUER,
        "--jwks",
        jwks,
        "--port",
        "0",
        "--workers",
        "1",
        "--no-directory",
        "--roles-claim",
        "roles",
      ]);
      expect(await Promise.race([both.exited, sleep(30_000).then(() => "hung")])).toBe(2);
      expect(both.stderr()).toContain("config.noDirectory: cannot be combined with --roles-claim");
    },
    60_000,
  );
});

function workerPids(g: PortierGroup): number[] {
  return g
    .stdout()
    .split("\n")
    .filter((l) => l.includes('"event":"worker_listening"'))
    .map((l) => (JSON.parse(l) as { workerPid: number }).workerPid);
}

describe.concurrent("workers (--workers 2)", () => {
  it("a crashed worker is replaced after a back-off and the service keeps answering", async () => {
    const g = startGroup(serveArgs(2));
    const url = await listeningUrl(g);
    await until(() => workerPids(g).length === 2, 20_000);
    const [victim] = workerPids(g) as [number];
    process.kill(victim, "SIGKILL");
    await g.waitFor(/"event":"worker_exit".*"reason":"killed by SIGKILL".*"restartInMs":250/);
    await until(() => workerPids(g).length === 3, 20_000);
    expect(workerPids(g)[2]).not.toBe(victim);
    expect(g.members()).not.toContain(victim);
    const token = await machineToken(keys);
    const res = await fetch(`${url}/decide`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ method: "GET", path: "/v1/roles", token }),
    });
    expect(((await res.json()) as { allow: boolean }).allow).toBe(true);
    process.kill(g.pgid, "SIGTERM");
    expect(await Promise.race([g.exited, sleep(15_000).then(() => "still running")])).toBe(0);
    expect(await untilGone(g.pgid, 5000)).toEqual([]);
  }, 60_000);

  it("a crash loop ends the whole service with one line and exit 2", async () => {
    const bundle = join(tempDir(), "bundle.tar.gz");
    copyFileSync(BUNDLE, bundle);
    const g = startGroup(serveArgs(2, ["--bundle", bundle, "--no-watch"]));
    await listeningUrl(g);
    await until(() => workerPids(g).length === 2, 20_000);
    // Every replacement now fails to start, so one crash becomes a loop.
    unlinkSync(bundle);
    process.kill(workerPids(g)[0] as number, "SIGKILL");
    expect(await Promise.race([g.exited, sleep(60_000).then(() => "still running")])).toBe(2);
    expect(g.stderr().split("\n").filter(Boolean)).toEqual([
      expect.stringMatching(
        new RegExp(
          String.raw`^portier serve: workers died 5 times within 60 s \(last: config\.bundle: file not ` +
            String.raw`found: ` +
            String.raw`.*bundle\.tar\.gz .*\); stopping the service$`,
        ),
      ),
    ]);
    const restarts = g
      .stdout()
      .split("\n")
      .filter((l) => l.includes('"event":"worker_exit"'))
      .map((l) => (JSON.parse(l) as { restartInMs: number }).restartInMs);
    expect(restarts).toEqual([250, 500, 1000, 2000]);
    expect(await untilGone(g.pgid, 5000)).toEqual([]);
  }, 90_000);

  it("the primary's death ends the workers", async () => {
    const g = startGroup(serveArgs(2));
    await listeningUrl(g);
    await until(() => workerPids(g).length === 2, 20_000);
    process.kill(g.pgid, "SIGKILL");
    expect(await untilGone(g.pgid, 10_000)).toEqual([]);
  }, 60_000);
});
