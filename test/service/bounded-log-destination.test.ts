/**
 * The log destination under back-pressure: with a reader that does not drain, the bytes waiting never pass
 * the cap and the lines past it are dropped whole and counted; writing resumes when the reader catches up;
 * a refusing descriptor counts lines instead of throwing. Then the real `portier serve` with its stdout a
 * pipe nobody reads: /metrics reports the dropped lines and a buffer within the cap.
 */
import { execFileSync } from "node:child_process";
import { closeSync, constants, openSync, readSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BoundedLogDestination } from "../../src/service/bounded-log-destination.js";
import { ISSUER, makeKeys, startServe, tempDir, until, type ServiceProcess } from "./helpers.js";
import { metricValue } from "../support/metrics.js";

/** A named pipe nobody reads (opened read-write, non-blocking like stdout on a pipe), filled to the brim. */
function fullPipe() {
  const path = join(tempDir(), "log.fifo");
  execFileSync("mkfifo", [path]);
  const fd = openSync(path, constants.O_RDWR | constants.O_NONBLOCK);
  const filler = Buffer.alloc(4096, 0x2e);
  let filled = 0;
  try {
    for (;;) filled += writeSync(fd, filler);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EAGAIN") throw err;
  }
  let received = "";
  return {
    fd,
    /** The reader catches up: reads whatever is in the pipe now. */
    read() {
      const buf = Buffer.alloc(65536);
      try {
        for (let n = readSync(fd, buf); n > 0; n = readSync(fd, buf)) received += buf.toString("utf8", 0, n);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EAGAIN") throw err;
      }
    },
    /** What was read past the filler. */
    lines: () => received.slice(filled).split("\n").filter(Boolean),
    close: () => closeSync(fd),
  };
}

const line = (i: number) => `${JSON.stringify({ msg: "decision", i, pad: "x".repeat(200) })}\n`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("BoundedLogDestination", () => {
  it(
    "with the reader stuck, keeps the bytes waiting " + "within the cap and drops and counts whole lines past it",
    async () => {
      const pipe = fullPipe();
      const cap = 16 * 1024;
      const dest = new BoundedLogDestination({
        fd: pipe.fd,
        maxBufferBytes: cap,
        minWriteBytes: 1024,
        flushIntervalMs: 20,
      });
      let highest = 0;
      for (let i = 0; i < 2000; i++) {
        dest.write(line(i));
        highest = Math.max(highest, dest.bufferedBytes);
        if (i % 100 === 0) await sleep(5);
      }
      expect(highest).toBeLessThanOrEqual(cap);
      expect(highest).toBeGreaterThan(cap - 2 * line(0).length);
      // Still stuck a while later: nothing was written, the buffer is full, the rest was dropped and counted.
      await sleep(300);
      expect(dest.bufferedBytes).toBeLessThanOrEqual(cap);
      const kept = Math.floor(dest.bufferedBytes / line(0).length);
      expect(dest.droppedLines).toBe(2000 - kept);

      // The reader catches up: the kept lines arrive whole and in order, and new lines are written again.
      const drained = new Promise<void>((r) => dest.flush(() => r()));
      const reading = setInterval(() => pipe.read(), 10);
      await drained;
      dest.write(line(5000));
      await new Promise<void>((r) => dest.flush(() => r()));
      clearInterval(reading);
      pipe.read();
      const got = pipe.lines().map((l) => (JSON.parse(l) as { i: number }).i);
      expect(got).toEqual([...Array.from({ length: kept }, (_, i) => i), 5000]);
      expect(dest.droppedLines).toBe(2000 - kept);
      expect(dest.bufferedBytes).toBe(0);
      // Drained: end() closes the descriptor (the destination owns it, as sonic-boom does).
      expect(await dest.end(5000)).toBe(true);
    },
  );

  it("counts bytes, not characters, and passes lines with multi-byte characters through whole", async () => {
    const pipe = fullPipe();
    const dest = new BoundedLogDestination({ fd: pipe.fd, maxBufferBytes: 1 << 20, minWriteBytes: 1 });
    const lines = ["é", "😀", "日本語", "a\u00e9\u{1f600}"].map((text, i) => `${JSON.stringify({ i, text })}\n`);
    for (const l of lines) dest.write(l);
    // The reader is stuck: everything waits, counted in UTF-8 bytes.
    expect(dest.bufferedBytes).toBe(lines.reduce((n, l) => n + Buffer.byteLength(l), 0));
    const drained = new Promise<void>((r) => dest.flush(() => r()));
    const reading = setInterval(() => pipe.read(), 10);
    await drained;
    clearInterval(reading);
    pipe.read();
    expect(pipe.lines()).toEqual(lines.map((l) => l.slice(0, -1)));
    expect(dest.bufferedBytes).toBe(0);
    expect(await dest.end(5000)).toBe(true);
  });

  it("counts the lines a refusing descriptor loses instead of throwing", async () => {
    const file = join(tempDir(), "read-only.log");
    writeFileSync(file, "");
    const fd = openSync(file, "r");
    const dest = new BoundedLogDestination({ fd, maxBufferBytes: 1 << 20, minWriteBytes: 1 });
    dest.write(line(1));
    await new Promise<void>((r) => dest.flush(() => r()));
    dest.write(line(2) + line(3));
    await new Promise<void>((r) => dest.flush(() => r()));
    expect(dest.droppedLines).toBe(3);
    expect(dest.bufferedBytes).toBe(0);
    // Given up (and its descriptor closed): later lines are counted, not written, and never thrown.
    dest.write(line(4));
    expect(dest.droppedLines).toBe(4);
    await dest.end(10);
  });
});

describe("portier serve with stdout not drained", () => {
  let svc: ServiceProcess | undefined;
  afterEach(async () => {
    svc?.proc.stdout?.resume();
    await svc?.stop();
  });

  const cap = 65536;
  // Unauthenticated garbage logs a line per decision like any other: 100 per batch.
  const batch = JSON.stringify({
    requests: Array.from({ length: 100 }, (_, i) => ({ method: "GET", path: `/v2/ORG${i}/centres`, token: "garbage" })),
  });

  /** `portier serve` whose stdout nobody reads once it has said it listens: the pipe fills, then its buffer. */
  async function serveUndrained(): Promise<ServiceProcess> {
    const keys = await makeKeys();
    const jwks = join(tempDir(), "jwks.json");
    writeFileSync(jwks, JSON.stringify(keys.jwks));
    const s = await startServe([
      "--issuer",
      ISSUER,
      "--jwks",
      jwks,
      "--no-directory",
      "--log-buffer-bytes",
      String(cap),
    ]);
    s.proc.stdout!.removeAllListeners("data");
    s.proc.stdout!.pause();
    return s;
  }

  it("drops and counts log lines past --log-buffer-bytes instead of growing", async () => {
    svc = await serveUndrained();
    const metric = async (name: string) => metricValue(await (await fetch(`${svc!.url}/metrics`)).text(), name) ?? NaN;

    // Stuck means stuck here too: a paused stream still reads up to its high-water mark (64 KiB since Node 22), so
    // lines go on draining into it until it is full; wait for that as well as for the first drop.
    const stdout = svc.proc.stdout!;
    const stuck = async () =>
      (await metric("portier_log_lines_dropped_total")) > 0 && stdout.readableLength >= stdout.readableHighWaterMark;
    for (let i = 0; i < 20 && !(await stuck()); i++) {
      for (let j = 0; j < 10; j++) {
        const res = await fetch(`${svc.url}/decide`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: batch,
        });
        expect(res.status).toBe(200);
      }
    }
    const dropped = await metric("portier_log_lines_dropped_total");
    expect(dropped).toBeGreaterThan(0);
    expect(await metric("portier_log_buffer_bytes")).toBeLessThanOrEqual(cap);

    // More decisions: more drops, the buffer within the cap after every request, the service still answering.
    // 900 more lines dropped, within 20 more requests of 100 lines: the pipe and the reader's stream may still take
    // a read's worth (up to 64 KiB each on Node 24) before they are full.
    for (let j = 0; j < 20 && (await metric("portier_log_lines_dropped_total")) < dropped + 900; j++) {
      const res = await fetch(`${svc.url}/decide`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: batch,
      });
      expect(res.status).toBe(200);
      expect(await metric("portier_log_buffer_bytes")).toBeLessThanOrEqual(cap);
    }
    expect(await metric("portier_log_lines_dropped_total")).toBeGreaterThanOrEqual(dropped + 900);

    // The reader comes back: the buffer drains.
    svc.proc.stdout!.resume();
    await until(async () => (await metric("portier_log_buffer_bytes")) < cap / 4, 10_000);
  }, 90_000);

  it("still stops on SIGTERM while nobody reads its stdout", async () => {
    svc = await serveUndrained();
    for (let j = 0; j < 30; j++)
      await fetch(`${svc.url}/decide`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: batch,
      });
    let exit: [number | null, string | null] | undefined;
    svc.proc.once("exit", (code, signal) => (exit = [code, signal]));
    svc.proc.kill("SIGTERM");
    // A clean stop exits 0 by itself, within --shutdown-timeout (10 s) plus 1 s for the log: waited for (polled)
    // up to well past that, so a loaded machine's slow stop passes and a stop stuck on stdout still fails.
    await until(() => exit !== undefined, 30_000);
    expect(exit).toEqual([0, null]);
  }, 60_000);
});
