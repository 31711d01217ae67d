/**
 * The shipper against a real HTTP collector that fails, stalls, refuses connections and comes back: every event
 * delivered exactly once, batches within their compressed size, 400 dropped and 413 split (both counted), the
 * oldest dropped only when the buffer is full, the stop flushing within its deadline, and the collector's
 * credentials never shown.
 */
import { afterEach, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { Shipper, type ShipperOptions } from "../../../src/service/decision-logs/shipper.js";
import { newStats, type DecisionLogStats } from "../../../src/service/decision-logs/stats.js";
import { httpTarget } from "../../../src/reload/index.js";
import { TokenFile } from "../../../src/service/decision-logs/token-file.js";
import { idCounts, startCollector, type Collector } from "../../support/collector.js";
import { until } from "../../support/until.js";
import { tempDir } from "../helpers.js";

let collector: Collector;
let logged = "";
const shippers: Shipper[] = [];

afterEach(async () => {
  for (const s of shippers.splice(0)) await s.close(Date.now());
  await collector?.close();
  logged = "";
});

function ship(url: string, options: Partial<ShipperOptions> = {}): { shipper: Shipper; stats: DecisionLogStats } {
  const stats = newStats();
  const shipper = new Shipper({
    target: httpTarget(url),
    token: () => undefined,
    bufferBytes: 1 << 20,
    batchBytes: 4096,
    periodMs: 50,
    timeoutMs: 5000,
    problemAfterMs: 200,
    backoffBaseMs: 20,
    backoffMaxMs: 200,
    stats,
    logger: pino({ level: "info" }, { write: (l: string) => void (logged += l) }),
    ...options,
  });
  shippers.push(shipper);
  return { shipper, stats };
}

/** An event of about `pad` bytes with a varied body (so it does not compress to nothing). */
function event(i: number, pad = 200): string {
  const noise = Array.from({ length: pad / 4 }, (_, k) =>
    ((i * 7919 + k * 104729) % 99991).toString(36).padStart(4, "0"),
  );
  return JSON.stringify({ decision_id: id(i), input: { noise: noise.join("") } });
}

/** Decision ids of one length, so that every event has the same size. */
function id(i: number): string {
  return `d-${String(i).padStart(5, "0")}`;
}

function addAll(shipper: Shipper, from: number, to: number): void {
  for (let i = from; i < to; i++) shipper.add(event(i));
}

function expectEachOnce(received: Record<string, unknown>[], from: number, to: number): void {
  const counts = idCounts(received);
  const missing = [];
  for (let i = from; i < to; i++) if (counts.get(id(i)) !== 1) missing.push(i);
  expect(missing).toEqual([]);
  expect(received.length).toBe(to - from);
}

describe("the shipper", () => {
  it("delivers every event once, in batches no larger than --decision-log-batch-bytes compressed", async () => {
    collector = await startCollector();
    const { shipper, stats } = ship(collector.url);
    addAll(shipper, 0, 2000);
    // The collector holds a batch before the shipper reads its answer: on a loaded machine the last answer may still
    // be on its way when the events are all there, so the shipper's own count is awaited too.
    await until(() => collector.events.length >= 2000 && stats.uploads.ok === collector.posts.length, 10_000);
    expectEachOnce(collector.events, 0, 2000);
    expect(collector.posts.length).toBeGreaterThan(3);
    for (const p of collector.posts) expect(p.bytes).toBeLessThanOrEqual(4096);
    expect(stats.sentEvents).toBe(2000);
    expect(stats.bufferedEvents).toBe(0);
    expect(stats.bufferedBytes).toBe(0);
    expect(stats.uploads.ok).toBe(collector.posts.length);
    expect(stats.lastUploadOkMs).toBeGreaterThan(0);
  });

  it("keeps a batch the collector fails (503), refuses or stalls on, retried until delivered", async () => {
    collector = await startCollector();
    // A stalled upload is given up after 1.5 s (not less: a loaded machine may answer a good one that late).
    const { shipper, stats } = ship(collector.url, { timeoutMs: 1500 });
    collector.mode = "fail";
    addAll(shipper, 0, 100);
    await until(() => stats.uploads.failed >= 2);
    collector.mode = "stall";
    addAll(shipper, 100, 200);
    await until(() => collector.posts.some((p) => p.status === "stalled"));
    // Still stalled: the upload's time limit gives it up, and the batch is sent again.
    const failedBefore = stats.uploads.failed;
    await until(() => stats.uploads.failed > failedBefore, 10_000);
    expect(collector.posts.filter((p) => p.status === "stalled").length).toBeGreaterThanOrEqual(1);
    await collector.stop();
    addAll(shipper, 200, 300);
    await until(() => stats.uploads.failed >= 5);
    expect(collector.events).toEqual([]);
    collector.mode = "ok";
    await collector.start();
    await until(() => collector.events.length >= 300, 10_000);
    expectEachOnce(collector.events, 0, 300);
    expect(stats.retries).toBeGreaterThan(0);
    expect(Object.values(stats.dropped).reduce((a, b) => a + b)).toBe(0);
    expect(logged).toContain("decision_logs_upload_failed");
    expect(logged).toContain("decision_logs_upload_recovered");
  });

  it("backs off exponentially with jitter between retries", async () => {
    collector = await startCollector();
    collector.mode = "fail";
    const { shipper } = ship(collector.url, { backoffBaseMs: 40, backoffMaxMs: 10_000, random: () => 1 });
    const start = Date.now();
    shipper.add(event(1));
    await until(() => collector.posts.length >= 5, 10_000);
    // 40, 80, 160, 320 ms between the 5 tries at least (random() = 1: the whole ceiling): 600 ms in all.
    expect(Date.now() - start).toBeGreaterThanOrEqual(600);
  });

  it("drops a batch the collector refuses as malformed (400), counted, and goes on with the next", async () => {
    collector = await startCollector();
    const { shipper, stats } = ship(collector.url);
    collector.mode = "malformed";
    addAll(shipper, 0, 10);
    await until(() => stats.dropped.malformed === 10);
    collector.mode = "ok";
    addAll(shipper, 10, 20);
    await until(() => collector.events.length >= 10);
    expectEachOnce(collector.events, 10, 20);
    expect(stats.uploads.malformed).toBeGreaterThan(0);
    expect(stats.bufferedEvents).toBe(0);
  });

  it("splits a batch answered 413 until it is taken, and drops a single event refused", async () => {
    collector = await startCollector();
    collector.mode = "too_large";
    collector.maxBytes = 600;
    const { shipper, stats } = ship(collector.url);
    addAll(shipper, 0, 40);
    await until(() => collector.events.length >= 40, 10_000);
    expectEachOnce(collector.events, 0, 40);
    expect(stats.uploads.too_large).toBeGreaterThan(0);
    collector.maxBytes = 10;
    shipper.add(event(99));
    await until(() => stats.dropped.too_large === 1);
    expect(stats.bufferedEvents).toBe(0);
  });

  it("drops the oldest events only when the buffer is full, each counted, and delivers the newest", async () => {
    collector = await startCollector();
    await collector.stop();
    const size = Buffer.byteLength(event(0));
    const { shipper, stats } = ship(collector.url, { bufferBytes: size * 50 + 10, backoffMaxMs: 50 });
    addAll(shipper, 0, 50);
    expect(stats.dropped.buffer_full).toBe(0);
    addAll(shipper, 50, 80);
    expect(stats.dropped.buffer_full).toBe(30);
    expect(stats.bufferedBytes).toBeLessThanOrEqual(size * 50 + 10);
    await collector.start();
    await until(() => collector.events.length + stats.dropped.buffer_full >= 80, 10_000);
    // The batch on the wire when the buffer filled may hold older events; all the newest arrive.
    const ids = new Set(collector.events.map((e) => e.decision_id));
    for (let i = 50; i < 80; i++) expect(ids.has(id(i))).toBe(true);
    expect(collector.events.length + stats.dropped.buffer_full).toBe(80);
  });

  it("on stop, retries through an outage until the deadline, delivering once it is back", async () => {
    collector = await startCollector();
    await collector.stop();
    const { shipper, stats } = ship(collector.url, { backoffBaseMs: 200, backoffMaxMs: 60_000 });
    addAll(shipper, 0, 100);
    await until(() => stats.uploads.failed >= 3, 10_000);
    const closed = shipper.close(Date.now() + 5000);
    setTimeout(() => void collector.start(), 500);
    await closed;
    expectEachOnce(collector.events, 0, 100);
    expect(stats.dropped.shutdown).toBe(0);
  });

  it("on stop, counts what is left at the deadline as dropped (shutdown) and returns by then", async () => {
    collector = await startCollector();
    collector.mode = "stall";
    const { shipper, stats } = ship(collector.url, { timeoutMs: 60_000 });
    addAll(shipper, 0, 30);
    await until(() => collector.posts.length >= 1);
    const start = Date.now();
    await shipper.close(Date.now() + 300);
    expect(Date.now() - start).toBeLessThan(1500);
    expect(stats.dropped.shutdown).toBe(30);
    expect(stats.bufferedEvents).toBe(30);
    expect(logged).toContain("decision_logs_lost");
  });

  it("reports a collector failing for longer than the bound, credentials shown as ***", async () => {
    collector = await startCollector();
    collector.mode = "fail";
    const url = collector.url.replace("http://", "http://user:s3cret-pass@");
    const { shipper } = ship(url);
    shipper.add(event(1));
    expect(shipper.problem()).toBeUndefined();
    await until(() => shipper.problem() !== undefined, 5000);
    const problem = shipper.problem()!;
    expect(problem).toMatch(/has failed for \d+ s \(the collector answered 503\); 1 events wait/);
    expect(problem).toContain("http://***@127.0.0.1");
    expect(problem + logged).not.toContain("s3cret");
    expect(collector.posts[0]!.authorization).toBe(`Basic ${Buffer.from("user:s3cret-pass").toString("base64")}`);
    collector.mode = "ok";
    await until(() => collector.events.length === 1, 5000);
    expect(shipper.problem()).toBeUndefined();
  });

  it("sends the token file's bearer token, read again when the file changes (a bad new one is refused)", async () => {
    collector = await startCollector();
    const file = join(tempDir(), "token");
    writeFileSync(file, "first-token\n");
    const tokens = new TokenFile(file);
    const { shipper } = ship(collector.url, { token: () => tokens.current() });
    shipper.add(event(1));
    await until(() => collector.events.length === 1);
    writeFileSync(file, "second-token-longer\n");
    shipper.add(event(2));
    await until(() => collector.events.length === 2);
    writeFileSync(file, "two words\n");
    shipper.add(event(3));
    await until(() => collector.events.length === 3);
    expect(collector.posts.map((p) => p.authorization)).toEqual([
      "Bearer first-token",
      "Bearer second-token-longer",
      "Bearer second-token-longer",
    ]);
    expect(tokens.lastError).toMatch(/must hold one bearer token/);
    expect(tokens.lastError).not.toContain("two words");
    expect(logged).not.toContain("token");
  });
});
