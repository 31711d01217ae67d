/**
 * The log destination under back-pressure: with a reader that does not drain, the bytes waiting never pass
 * the cap and the lines past it are dropped whole and counted; writing resumes when the reader catches up;
 * a failed stream (EPIPE) counts lines instead of throwing. Then the real `portier serve` with its stdout a
 * pipe nobody reads: /metrics reports the dropped lines and a buffer within the cap.
 */
import { Writable } from "node:stream";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BoundedLogDestination } from "../../src/service/bounded-log-destination.js";
import { ISSUER, makeKeys, startServe, tempDir, until, type ServiceProcess } from "./helpers.js";

/** A stream whose reader is stuck until release(): every write stays pending (counted in writableLength). */
function stuckStream() {
  const held: Array<() => void> = [];
  let received = "";
  const stream = new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _enc, callback) {
      held.push(() => {
        received += chunk.toString();
        callback();
      });
    },
  });
  return {
    stream,
    received: () => received,
    /** The reader catches up: everything pending is written, and whatever comes next too. */
    async release() {
      while (held.length > 0) {
        held.shift()!();
        await new Promise((r) => setImmediate(r));
      }
    },
  };
}

const line = (i: number) => `${JSON.stringify({ msg: "decision", i, pad: "x".repeat(200) })}\n`;

describe("BoundedLogDestination", () => {
  it("keeps the bytes waiting within the cap and drops and counts whole lines past it", async () => {
    const reader = stuckStream();
    const cap = 16 * 1024;
    const dest = new BoundedLogDestination({ stream: reader.stream, maxBufferBytes: cap, minWriteBytes: 1024 });
    let highest = 0;
    for (let i = 0; i < 2000; i++) {
      dest.write(line(i));
      highest = Math.max(highest, dest.bufferedBytes);
    }
    expect(highest).toBeLessThanOrEqual(cap);
    expect(highest).toBeGreaterThan(cap - line(0).length * 2);
    const kept = Math.floor(highest / line(0).length);
    expect(dest.droppedLines).toBeGreaterThanOrEqual(2000 - kept - 1);

    // The reader catches up: the kept lines arrive whole and in order, and new lines are written again.
    const drained = new Promise<void>((r) => dest.flush(() => r()));
    await reader.release();
    await drained;
    const got = reader.received().split("\n").filter(Boolean).map((l) => (JSON.parse(l) as { i: number }).i);
    expect(got.length).toBeGreaterThan(0);
    expect(got).toEqual([...got].sort((a, b) => a - b));
    const droppedBefore = dest.droppedLines;
    dest.write(line(5000));
    const flushed = new Promise<void>((r) => dest.flush(() => r()));
    await reader.release();
    await flushed;
    expect(reader.received()).toContain('"i":5000');
    expect(dest.droppedLines).toBe(droppedBefore);
    expect(dest.bufferedBytes).toBe(0);
    await dest.end(10);
  });

  it("counts the lines of a failed stream instead of throwing", async () => {
    const stream = new Writable({ write: (_c, _e, cb) => cb(Object.assign(new Error("write EPIPE"), { code: "EPIPE" })) });
    const dest = new BoundedLogDestination({ stream, maxBufferBytes: 1 << 20, minWriteBytes: 1 });
    dest.write(line(1));
    await new Promise((r) => setImmediate(r));
    dest.write(line(2));
    dest.write(line(3));
    expect(dest.droppedLines).toBeGreaterThanOrEqual(2);
    await dest.end(10);
  });
});

describe("portier serve with stdout not drained", () => {
  let svc: ServiceProcess | undefined;
  afterEach(async () => {
    svc?.proc.stdout?.resume();
    await svc?.stop();
  });

  it("drops and counts log lines past --log-buffer-bytes instead of growing", async () => {
    const keys = await makeKeys();
    const jwks = join(tempDir(), "jwks.json");
    writeFileSync(jwks, JSON.stringify(keys.jwks));
    const cap = 65536;
    svc = await startServe(["--issuer", ISSUER, "--jwks", jwks, "--log-buffer-bytes", String(cap)]);
    // From here on nobody reads the service's stdout: the pipe fills, then the service's buffer.
    svc.proc.stdout!.removeAllListeners("data");
    svc.proc.stdout!.pause();
    const metric = async (name: string) => Number(new RegExp(`^${name} (\\d+)`, "m").exec(await (await fetch(`${svc!.url}/metrics`)).text())?.[1] ?? NaN);

    // Unauthenticated garbage logs a line per decision like any other: 100 per batch.
    const batch = JSON.stringify({ requests: Array.from({ length: 100 }, (_, i) => ({ method: "GET", path: `/v2/ORG${i}/centres`, token: "garbage" })) });
    for (let i = 0; i < 20 && !((await metric("portier_log_lines_dropped_total")) > 0); i++) {
      for (let j = 0; j < 10; j++) {
        const res = await fetch(`${svc.url}/decide`, { method: "POST", headers: { "content-type": "application/json" }, body: batch });
        expect(res.status).toBe(200);
      }
    }
    const dropped = await metric("portier_log_lines_dropped_total");
    expect(dropped).toBeGreaterThan(0);
    expect(await metric("portier_log_buffer_bytes")).toBeLessThanOrEqual(cap);

    // More decisions: more drops, the buffer still within the cap, the service still answering.
    for (let j = 0; j < 10; j++) await fetch(`${svc.url}/decide`, { method: "POST", headers: { "content-type": "application/json" }, body: batch });
    expect(await metric("portier_log_lines_dropped_total")).toBeGreaterThanOrEqual(dropped + 900);
    expect(await metric("portier_log_buffer_bytes")).toBeLessThanOrEqual(cap);

    // The reader comes back: the buffer drains.
    svc.proc.stdout!.resume();
    await until(async () => (await metric("portier_log_buffer_bytes")) < cap / 4, 10_000);
  }, 90_000);
});
