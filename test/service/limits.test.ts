/**
 * Bounded resources of the decision service. Over real sockets on loopback (the connection is what is bounded):
 * header, keep-alive and body timeouts; POST /decide stops reading as soon as the body cap is passed (the bytes
 * the server consumed are counted on its side). Over an in-memory connection (inject.ts): POST /decide refuses
 * bodies that are not JSON; an oversized token is the end client's input, answered as a decision (401
 * token_too_large) like every adapter does.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { connect, Socket } from "node:net";
import { join } from "node:path";
import { loadConfig, ConfigError, startService, type RunningService } from "../../src/service/index.js";
import { ISSUER, makeKeys, tempDir, userToken, TEACHER, type Keys } from "./helpers.js";
import { injector, type Injector } from "./inject.js";

const CAP = 4096;
let keys: Keys;
let svc: RunningService;
let port: number;
/** Bytes each server-side socket read, recorded when it closes (the server's own count). */
const consumed: number[] = [];

beforeAll(async () => {
  keys = await makeKeys();
  const jwks = join(tempDir(), "jwks.json");
  writeFileSync(jwks, JSON.stringify(keys.jwks));
  const config = loadConfig([
    "--issuer",
    ISSUER,
    "--jwks",
    jwks,
    "--no-directory",
    "--port",
    "0",
    "--workers",
    "1",
    "--log-level",
    "silent",
    "--no-watch",
    "--max-body-bytes",
    String(CAP),
    "--headers-timeout-ms",
    "1000",
    "--request-timeout-ms",
    "5000",
    "--keep-alive-timeout-ms",
    "300",
    "--body-timeout-ms",
    "500",
  ]);
  svc = await startService(config);
  await svc.verifier.ready();
  port = Number(new URL(svc.url).port);
  // TCP connections only: the in-memory ones of inject.ts (content type, token size) count no bytes.
  svc.server.on("connection", (socket: unknown) => {
    if (socket instanceof Socket) socket.on("close", () => consumed.push(socket.bytesRead));
  });
}, 30_000);

afterAll(async () => {
  await svc?.close();
});

/** A raw client connection that records what it receives and when the server closes it. */
function rawClient(): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let data = "";
    socket.on("data", (d: Buffer) => (data += d.toString("latin1")));
    socket.on("error", () => {});
    const closed = new Promise<void>((r) => socket.once("close", () => r()));
    socket.once("connect", () => resolve({ socket, received: () => data, closed }));
    socket.once("error", reject);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function lastConsumed(): Promise<number> {
  const before = consumed.length;
  for (let i = 0; i < 100 && consumed.length === before; i++) await sleep(20);
  return consumed[consumed.length - 1]!;
}

describe("server timeouts", () => {
  it("cuts a slow-loris header sender after the headers timeout (408, connection closed)", async () => {
    const c = await rawClient();
    c.socket.write("POST /decide HTTP/1.1\r\nHost: x\r\n");
    let sent = 0;
    let closedByServer = false;
    void c.closed.then(() => (closedByServer = true));
    // Would trickle for 20 s (one header byte every 100 ms); the server must hang up long before.
    const trickle = "X-Pad: slow\r\n".repeat(20);
    while (!closedByServer && sent < 200) {
      c.socket.write(trickle[sent]!);
      sent++;
      await sleep(100);
    }
    expect(closedByServer).toBe(true);
    expect(sent).toBeLessThan(200);
    expect(c.received()).toMatch(/^HTTP\/1\.1 408 /);
  }, 30_000);

  it("closes an idle keep-alive connection after the keep-alive timeout", async () => {
    const c = await rawClient();
    c.socket.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
    const idle = await Promise.race([c.closed.then(() => "closed"), sleep(5000).then(() => "still open")]);
    expect(c.received()).toMatch(/^HTTP\/1\.1 200 /);
    expect(idle).toBe("closed");
  });

  it("answers 408 body_timeout when the body of /decide does not arrive within the body deadline", async () => {
    const c = await rawClient();
    c.socket.write(
      'POST /decide HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"method":',
    );
    const outcome = await Promise.race([c.closed.then(() => "closed"), sleep(4000).then(() => "still open")]);
    expect(outcome).toBe("closed");
    expect(c.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(c.received()).toContain('"error":"body_timeout"');
  });

  it("applies the configured timeouts to the server", () => {
    expect(svc.server.headersTimeout).toBe(1000);
    expect(svc.server.requestTimeout).toBe(5000);
    expect(svc.server.keepAliveTimeout).toBe(300);
  });

  it("refuses a headers timeout longer than the request timeout, naming both", () => {
    expect(() =>
      loadConfig([
        "--issuer",
        ISSUER,
        "--no-directory",
        "--headers-timeout-ms",
        "9000",
        "--request-timeout-ms",
        "5000",
      ]),
    ).toThrow(ConfigError);
    expect(() =>
      loadConfig([
        "--issuer",
        ISSUER,
        "--no-directory",
        "--headers-timeout-ms",
        "9000",
        "--request-timeout-ms",
        "5000",
      ]),
    ).toThrow("config.headersTimeoutMs: must be <= config.requestTimeoutMs (5000)");
    expect(() => loadConfig(["--issuer", ISSUER, "--no-directory", "--body-timeout-ms", "0"])).toThrow(
      "config.bodyTimeoutMs: must be >= 100",
    );
  });
});

describe("POST /decide body cap", () => {
  it(
    "answers 413 to a chunked body as soon as it passes the cap, while the client is still sending, and stops " +
      "reading",
    async () => {
      const c = await rawClient();
      c.socket.write(
        "POST /decide HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
      );
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const frame = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from("\r\n")]);
      const total = 64 * 1024 * 1024;
      let written = 0;
      let closed = false;
      void c.closed.then(() => (closed = true));
      // 64 MiB, written as fast as the socket takes it; the answer must come long before the end.
      while (written < total && !closed && !c.received().includes("413")) {
        if (!c.socket.write(frame))
          await Promise.race([new Promise((r) => c.socket.once("drain", r)), c.closed, sleep(2000)]);
        written += chunk.length;
      }
      await Promise.race([c.closed, sleep(2000)]);
      c.socket.destroy();
      expect(c.received()).toMatch(/^HTTP\/1\.1 413 /);
      expect(c.received()).toContain('"error":"payload_too_large"');
      expect(written).toBeLessThan(total);
      // What the server read: the cap plus what was in flight, nowhere near the 64 MiB sent at it.
      expect(await lastConsumed()).toBeLessThan(CAP + 1024 * 1024);
    },
    30_000,
  );

  it("answers 413 to a declared Content-Length over the cap without reading the body", async () => {
    const c = await rawClient();
    const body = Buffer.alloc(2 * 1024 * 1024, 0x20);
    c.socket.write(
      `POST /decide HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    c.socket.write(body);
    await Promise.race([c.closed, sleep(3000)]);
    c.socket.destroy();
    expect(c.received()).toMatch(/^HTTP\/1\.1 413 /);
    expect(await lastConsumed()).toBeLessThan(1024 * 1024);
  });
});

describe("POST /decide content type", () => {
  const body = JSON.stringify({ method: "GET", path: "/v1/roles" });
  it.each([
    ["text/plain", 415],
    ["text/plain; charset=utf-8", 415],
    ["application/x-www-form-urlencoded", 415],
    ["multipart/form-data; boundary=x", 415],
    ["application/json; charset=iso-8859-1", 415],
    ["application/jsonx", 415],
    ["", 415],
    ["application/json", 200],
    ["application/json; charset=utf-8", 200],
    ['Application/JSON; Charset="UTF-8"', 200],
    ["application/vnd.portier.decision+json", 200],
    ["application/problem+json; charset=utf-8", 200],
    [undefined, 200],
  ])("Content-Type %j -> %i", async (type, status) => {
    const headers: Record<string, string> = type === undefined ? {} : { "content-type": type };
    const res = await injector(svc).fetch("/decide", { method: "POST", headers, body: Buffer.from(body) });
    expect(res.status).toBe(status);
    const json = (await res.json()) as { error?: string; reason?: string };
    if (status === 415) expect(json.error).toBe("unsupported_media_type");
    else expect(json.reason).toBe("token_missing");
  });
});

describe("an oversized token is a decision, not a bad request", () => {
  const big = "a".repeat(20 * 1024);
  const ask = (body: unknown) =>
    injector(svc).fetch("/decide", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  it.each([
    ["token", { method: "GET", path: "/v1/roles", token: big }],
    ["headers.authorization", { method: "GET", path: "/v1/roles", headers: { authorization: `Bearer ${big}` } }],
  ])("a 20 KB %s answers 200 with a 401 token_too_large decision", async (_where, body) => {
    const bigSvc = await bigCap();
    const res = await bigSvc.fetch("/decide", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ allow: false, status: 401, reason: "token_too_large" });
  });

  // Issue 17 item 9: the cap counts UTF-8 bytes; 3000 "€" are 9000 bytes in 3000 UTF-16 units.
  it("a token of multi-byte characters over the cap in bytes (not in characters) is token_too_large", async () => {
    const bigSvc = await bigCap();
    const res = await bigSvc.fetch("/decide", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ method: "GET", path: "/v1/roles", token: "€".repeat(3000) }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ allow: false, status: 401, reason: "token_too_large" });
  });

  it("in a batch, only that request is denied token_too_large", async () => {
    const bigSvc = await bigCap();
    const good = await userToken(keys, TEACHER);
    const res = await bigSvc.fetch("/decide", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        requests: [
          { method: "GET", path: "/v1/roles", token: big },
          { method: "GET", path: "/v2/ORG001/centres", token: good },
        ],
      }),
    });
    expect(res.status).toBe(200);
    const answers = (await res.json()) as Array<{ reason: string; status: number }>;
    expect(answers.map((a) => [a.status, a.reason])).toEqual([
      [401, "token_too_large"],
      [403, "not_synced"],
    ]);
  });

  it("the body cap still bounds the whole body", async () => {
    expect((await ask({ method: "GET", path: "/v1/roles", token: big })).status).toBe(413);
  });
});

let bigCapService: RunningService | undefined;
/** A second instance with the default body cap (64 KiB), which a 20 KB token fits under. */
async function bigCap(): Promise<Injector> {
  if (!bigCapService) {
    const jwks = join(tempDir(), "jwks.json");
    writeFileSync(jwks, JSON.stringify(keys.jwks));
    bigCapService = await startService(
      loadConfig([
        "--issuer",
        ISSUER,
        "--jwks",
        jwks,
        "--no-directory",
        "--port",
        "0",
        "--log-level",
        "silent",
        "--no-watch",
      ]),
      { listen: false },
    );
    await bigCapService.verifier.ready();
  }
  return injector(bigCapService);
}
afterAll(async () => {
  await bigCapService?.close();
});
