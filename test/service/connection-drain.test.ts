/**
 * Restarts that lose nothing (src/service/connection-drain.ts, src/cli/supervise-workers.ts), with the real
 * `portier serve` and raw sockets: 200 concurrent POST /decide written just before SIGTERM are all answered;
 * with --shutdown-delay /ready answers 503 (stopping) while new connections are still accepted and answered;
 * without a delay every request is either answered or refused at connect, never dropped after it was sent.
 * With --workers 1 (one process) and --workers 2 (the primary hands connections to the workers). In process,
 * the rule for closing connections: never one whose request is arriving or has not come yet.
 */
import { afterAll, describe, expect, it } from "vitest";
import { readFileSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { createServer } from "node:http";
import { ConnectionDrain } from "../../src/service/connection-drain.js";
import { ISSUER, machineToken, makeKeys, tempDir, until } from "./helpers.js";
import { killAllGroups, startGroup, untilGone, type PortierGroup } from "./process-group.js";
import type { ReadyJson } from "../support/answers.js";

afterAll(() => killAllGroups());

const keys = await makeKeys();
const dir = tempDir();
const jwks = join(dir, "jwks.json");
writeFileSync(jwks, JSON.stringify(keys.jwks));
const token = await machineToken(keys);
const BODY = JSON.stringify({ method: "GET", path: "/v1/roles", token });
const REQUEST =
  `POST /decide HTTP/1.1\r\nHost: portier\r\nContent-Type: ` +
  `application/json\r\nContent-Length: ${Buffer.byteLength(BODY)}\r\n\r\n${BODY}`;
const CONCURRENT = 200;

/** What became of one request: a whole answer, refused at connect, or the connection closed after it was sent. */
type Outcome =
  | { outcome: "answered"; status: number; connectionClose: boolean; body: string }
  | { outcome: "refused" | "dropped"; code: string };

interface Sent {
  /** Resolves once the request is written (or the connection refused or closed). */
  written: Promise<void>;
  result: Promise<Outcome>;
}

/**
 * A whole HTTP/1.1 answer at the start of `raw`, or undefined while incomplete: its body is Content-Length
 * bytes, or (`closed`: the server closed the connection) everything after the head.
 */
function parseAnswer(
  raw: Buffer,
  closed = false,
): { status: number; connectionClose: boolean; body: string; length: number } | undefined {
  const text = raw.toString("latin1");
  const end = text.indexOf("\r\n\r\n");
  if (end < 0) return undefined;
  const head = text.slice(0, end);
  const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? (closed ? raw.length - (end + 4) : NaN));
  if (!Number.isInteger(length) || raw.length - (end + 4) < length) return undefined;
  return {
    status: Number(head.slice(9, 12)),
    connectionClose: /\r\nconnection: *close/i.test(head),
    body: raw.subarray(end + 4, end + 4 + length).toString("utf8"),
    length: end + 4 + length,
  };
}

const opened: Connection[] = [];
afterAll(() => opened.forEach((c) => c.socket.destroy()));

/** A keep-alive client connection: one request at a time, each answer read whole; the server decides when it closes. */
class Connection {
  readonly socket: Socket;
  private connected = false;
  private closed = false;
  private code = "closed";
  private data = Buffer.alloc(0);
  private pending: ((o: Outcome) => void) | undefined;
  private readonly open: Promise<boolean>;

  constructor(port: number) {
    opened.push(this);
    this.socket = connect(port, "127.0.0.1");
    this.open = new Promise((resolve) => {
      this.socket.once("connect", () => resolve((this.connected = true)));
      this.socket.once("close", () => resolve(false));
    });
    this.socket.on("data", (d: Buffer) => {
      this.data = Buffer.concat([this.data, d]);
      const answer = parseAnswer(this.data);
      if (!answer || !this.pending) return;
      this.data = this.data.subarray(answer.length);
      const { length: _length, ...rest } = answer;
      this.settle({ outcome: "answered", ...rest });
    });
    this.socket.on("error", (err: NodeJS.ErrnoException) => (this.code = err.code ?? err.message));
    this.socket.on("close", () => {
      this.closed = true;
      const answer = parseAnswer(this.data, true);
      if (answer) {
        const { length: _length, ...rest } = answer;
        return this.settle({ outcome: "answered", ...rest });
      }
      this.settle({ outcome: this.connected ? "dropped" : "refused", code: this.code });
    });
  }

  send(request = REQUEST): Sent {
    let markWritten!: () => void;
    const written = new Promise<void>((r) => (markWritten = r));
    const result = new Promise<Outcome>((resolve) => (this.pending = resolve));
    void this.open.then((ok) => {
      if (!ok || this.closed) return markWritten();
      this.socket.write(request, () => markWritten());
    });
    return { written, result };
  }

  private settle(o: Outcome): void {
    const p = this.pending;
    this.pending = undefined;
    p?.(o);
  }
}

const send = (port: number, request?: string) => new Connection(port).send(request);

async function listeningPort(g: PortierGroup): Promise<number> {
  const m = await g.waitFor(/"url":"http:\/\/127\.0\.0\.1:(\d+)"[^\n]*"msg":"listening"/);
  return Number(m[1]);
}

const workersReady = (g: PortierGroup) =>
  g
    .stdout()
    .split("\n")
    .filter((l) => l.includes('"event":"worker_listening"')).length;

async function start(workers: number, delay: number): Promise<{ g: PortierGroup; port: number }> {
  const args = [
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
    "--shutdown-timeout",
    "10",
  ];
  const g = startGroup(delay > 0 ? [...args, "--shutdown-delay", String(delay)] : args);
  const port = await listeningPort(g);
  if (workers > 1) await until(() => workersReady(g) === workers, 20_000);
  return { g, port };
}

/**
 * Handshakes to `port` the server's kernel has not completed yet (SYN_RECV in /proc/net/tcp): a client sees its
 * connection established, and writes, before the server's kernel has it in the accept queue, by up to a second
 * on a CPU-starved host. Until it is there, the connection has not been accepted by anyone.
 */
function handshakesPending(port: number): number {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, "0")}`;
  return readFileSync("/proc/net/tcp", "utf8")
    .split("\n")
    .filter((l) => {
      const [, local, , state] = l.trim().split(/\s+/);
      return local?.endsWith(hex) && state === "03";
    }).length;
}

/**
 * 200 requests, every one written (and its connection complete in the server's kernel) before this returns: half
 * on keep-alive connections that were answered once and sat idle (the server must not close one while a request
 * is arriving on it), half on new connections.
 */
async function burst(port: number): Promise<Promise<Outcome>[]> {
  const idle = Array.from({ length: CONCURRENT / 2 }, () => new Connection(port));
  for (const o of await Promise.all(idle.map((c) => c.send().result)))
    expect(o).toMatchObject({ outcome: "answered", status: 200, connectionClose: false });
  const sent = [...idle.map((c) => c.send()), ...Array.from({ length: CONCURRENT / 2 }, () => send(port))];
  await Promise.all(sent.map((s) => s.written));
  await until(() => handshakesPending(port) === 0, 10_000, 5);
  return sent.map((s) => s.result);
}

/** How many requests ended which way: "answered 200", "dropped ECONNRESET", "refused ECONNREFUSED"... */
function tally(outcomes: Outcome[]): Record<string, number> {
  const t: Record<string, number> = {};
  for (const o of outcomes) {
    const key = o.outcome === "answered" ? `answered ${o.status}` : `${o.outcome} ${o.code}`;
    t[key] = (t[key] ?? 0) + 1;
  }
  return t;
}

async function expectCleanExit(g: PortierGroup): Promise<void> {
  expect(await Promise.race([g.exited, new Promise((r) => setTimeout(r, 15_000, "still running"))])).toBe(0);
  expect(await untilGone(g.pgid, 5000)).toEqual([]);
  expect(g.stderr()).toBe("");
}

// SIGTERM to the primary alone, as `kill` does, and to the whole group, as systemd and Ctrl-C do: with workers,
// the primary drives the stop either way.
describe.concurrent.each([
  { mode: "--workers 1", workers: 1, group: false },
  { mode: "--workers 2", workers: 2, group: true },
])("SIGTERM with 200 requests just sent: $mode", ({ workers, group }) => {
  const sigterm = (g: PortierGroup) => process.kill(group ? -g.pgid : g.pgid, "SIGTERM");

  it(
    "with --shutdown-delay: /ready 503 naming stopping, " + "new connections still answered, then all 200 answered",
    async () => {
      const { g, port } = await start(workers, 2);
      const results = await burst(port);
      sigterm(g);
      const ready = async () => {
        const r = await send(port, "GET /ready HTTP/1.1\r\nHost: portier\r\n\r\n").result;
        return r.outcome === "answered" ? r : undefined;
      };
      await until(async () => (await ready())?.status === 503, 5000, 20);
      const during = await ready();
      expect((JSON.parse(during!.body) as ReadyJson).missing[0]).toMatch(/^stopping: /);
      // Still accepting during the delay; each answer now closes its connection.
      const late = await send(port).result;
      expect(late).toMatchObject({ outcome: "answered", status: 200, connectionClose: true });
      const outcomes = await Promise.all(results);
      expect(tally(outcomes)).toEqual({ "answered 200": CONCURRENT });
      await expectCleanExit(g);
      // The port closed after the delay: a connection now is refused.
      expect(await send(port).result).toMatchObject({ outcome: "refused", code: "ECONNREFUSED" });
    },
    60_000,
  );

  it("without a delay: every request answered (or refused at connect), none dropped after it was sent", async () => {
    const { g, port } = await start(workers, 0);
    const results = await burst(port);
    sigterm(g);
    const outcomes = await Promise.all(results);
    // All were written before the signal, so none can be refused: each one is answered.
    expect(tally(outcomes)).toEqual({ "answered 200": CONCURRENT });
    await expectCleanExit(g);
    expect(await send(port).result).toMatchObject({ outcome: "refused", code: "ECONNREFUSED" });
  }, 60_000);
});

describe("--workers 2: a connection handed over by the primary", () => {
  // The worker's server listens (on a private socket) only so that node:http sweeps its connections' timeouts.
  it("still gets the headers timeout (408) when its headers never finish", async () => {
    const g = startGroup([
      "serve",
      "--issuer",
      ISSUER,
      "--jwks",
      jwks,
      "--no-directory",
      "--port",
      "0",
      "--workers",
      "2",
      "--headers-timeout-ms",
      "500",
      "--request-timeout-ms",
      "1000",
    ]);
    const port = await listeningPort(g);
    const slow = new Connection(port).send("GET /ready HTTP/1.1\r\nHost: por");
    const start = Date.now();
    const outcome = await Promise.race([slow.result, new Promise((r) => setTimeout(r, 8000, "no answer within 8 s"))]);
    expect(outcome).toMatchObject({ outcome: "answered", status: 408 });
    expect(Date.now() - start).toBeLessThan(5000);
    process.kill(g.pgid, "SIGTERM");
    await expectCleanExit(g);
  }, 60_000);
});

describe("ConnectionDrain (in process): which connections a stop may close", () => {
  const GET = "GET /x HTTP/1.1\r\nHost: portier\r\n\r\n";
  const pass = () => new Promise((r) => setImmediate(r));

  async function serve(): Promise<{ drain: ConnectionDrain; port: number }> {
    const server = createServer((_req, res) => res.end("ok"));
    const drain = new ConnectionDrain(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    afterAllClose.push(() => server.closeAllConnections());
    return { drain, port: (server.address() as { port: number }).port };
  }

  it.each([
    { case: "a whole request arriving on an idle keep-alive connection", now: GET, later: "" },
    {
      case: "half a request arriving on an idle keep-alive connection (the rest after the check)",
      now: GET.slice(0, 12),
      later: GET.slice(12),
    },
  ])("$case is answered, not closed", async ({ now, later }) => {
    const { drain, port } = await serve();
    const c = new Connection(port);
    expect(await c.send(GET).result).toMatchObject({ outcome: "answered", connectionClose: false });
    await pass();
    // The bytes are in the server's socket buffer, not read yet, when the stop starts closing idle connections.
    const second = c.send(now);
    await second.written;
    const stopped = drain.drain(Date.now() + 5000);
    await pass();
    await pass();
    if (later) c.socket.write(later);
    expect(await second.result).toMatchObject({ outcome: "answered", status: 200 });
    // Then idle with nothing received: closed, and the drain ends.
    await stopped;
    expect(drain.size).toBe(0);
  });

  it(
    "a connection whose first request has not come yet is kept until it comes; one that never sends is cut at the " +
      "deadline",
    async () => {
      const { drain, port } = await serve();
      const slow = new Connection(port);
      const silent = new Connection(port);
      await until(() => drain.size === 2, 5000, 5);
      const start = Date.now();
      const stopped = drain.drain(start + 300);
      await pass();
      await pass();
      expect(await slow.send(GET).result).toMatchObject({ outcome: "answered", status: 200 });
      expect(await silent.send("").result).toMatchObject({ outcome: "dropped" });
      await stopped;
      expect(Date.now() - start).toBeGreaterThanOrEqual(290);
    },
  );
});

const afterAllClose: Array<() => void> = [];
afterAll(() => afterAllClose.forEach((f) => f()));
