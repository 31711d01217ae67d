/**
 * The fixed-rate latency benchmark's pure parts: nearest-rank percentiles, the achieved rate and "sustained"
 * verdict, vegeta's per-request targets (ids never repeating, the path in headers and bodies) and its results.
 */
import { describe, expect, it } from "vitest";
import { percentile, secondsAt, summarise, vegetaAttempts, vegetaTargets, type Attempt } from "./latency.js";
import type { Load } from "./wrk.js";

describe("percentile (nearest rank)", () => {
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
  const thousand = Array.from({ length: 1000 }, (_, i) => i + 1);
  it.each([
    [hundred, 50, 50],
    [hundred, 99, 99],
    [hundred, 99.9, 100],
    [hundred, 100, 100],
    [hundred, 0.5, 1],
    [thousand, 99.9, 999],
    [thousand, 99, 990],
    [[7], 99.9, 7],
    [[1, 2], 50, 1],
  ])("of %#: p%s = %s", (sorted, q, want) => {
    expect(percentile(sorted, q)).toBe(want);
  });

  it("is NaN without values", () => {
    expect(percentile([], 50)).toBeNaN();
  });
});

describe("secondsAt", () => {
  it.each([
    [100, 5, 10],
    [1000, 5, 5],
    [5000, 5, 5],
    [300, 1, 4],
  ])("at %s/s with %s s asked: %s s (>= 1,000 requests)", (rate, seconds, want) => {
    expect(secondsAt(rate, seconds)).toBe(want);
  });
});

describe("summarise", () => {
  // 1,000 requests sent 1 ms apart, 0.5 ms each, the last one slow.
  const steady: Attempt[] = Array.from({ length: 1000 }, (_, i) => ({
    startMs: i,
    latencyMs: i === 999 ? 20 : 0.5,
    ok: true,
  }));

  it("answers over the span from the first request to the last answer give the achieved rate", () => {
    const s = summarise(steady, 1000);
    expect(s.achieved).toBeCloseTo(1000 / 1.019, 6);
    expect(s).toMatchObject({
      requests: 1000,
      errors: 0,
      p50Ms: 0.5,
      p99Ms: 0.5,
      p999Ms: 0.5,
      maxMs: 20,
      sustained: true,
    });
  });

  it("is not sustained below 95% of the rate, nor with any error", () => {
    expect(summarise(steady, 1100).sustained).toBe(false);
    const failed = steady.map((a, i) => (i === 3 ? { ...a, ok: false } : a));
    expect(summarise(failed, 1000)).toMatchObject({ errors: 1, sustained: false });
  });
});

describe("vegeta targets and results", () => {
  const load: Load = {
    method: "POST",
    target: "/decide",
    pathTemplate: "/v2/x/{id}/y",
    unique: true,
    variants: [
      { headers: { "content-type": "application/json" }, body: JSON.stringify({ path: "__PATH__", token: "A" }) },
      { headers: { "x-original-uri": "__PATH__" } },
    ],
  };

  it("one target per request, ids from the start never repeating, variants in turn, the path filled in", () => {
    const lines = vegetaTargets("http://h:1", load, 3, 500).trim().split("\n");
    const targets = lines.map(
      (l) => JSON.parse(l) as { method: string; url: string; header: Record<string, string[]>; body?: string },
    );
    expect(targets.map((t) => [t.method, t.url])).toEqual([
      ["POST", "http://h:1/decide"],
      ["POST", "http://h:1/decide"],
      ["POST", "http://h:1/decide"],
    ]);
    expect(JSON.parse(Buffer.from(targets[0]!.body!, "base64").toString())).toEqual({
      path: "/v2/x/500/y",
      token: "A",
    });
    expect(targets[1]!.header).toEqual({ "x-original-uri": ["/v2/x/501/y"] });
    expect(targets[1]!.body).toBeUndefined();
    expect((JSON.parse(Buffer.from(targets[2]!.body!, "base64").toString()) as { path: string }).path).toBe(
      "/v2/x/502/y",
    );
  });

  it("the fixed id 42 when the load repeats its inputs", () => {
    expect(vegetaTargets("http://h:1", { ...load, unique: false }, 2, 500)).not.toMatch(/50[01]/);
  });

  it("reads vegeta's JSON results: start, latency in ms, and 2xx/3xx without error as ok", () => {
    const out = [
      { timestamp: "2026-11-25T19:00:00.000Z", latency: 1_500_000, code: 200, error: "" },
      { timestamp: "2026-11-25T19:00:00.001Z", latency: 2_000_000, code: 403, error: "" },
      { timestamp: "2026-11-25T19:00:00.002Z", latency: 9_000_000, code: 0, error: "dial tcp: refused" },
    ]
      .map((x) => JSON.stringify(x))
      .join("\n");
    expect(vegetaAttempts(`${out}\n`)).toEqual([
      { startMs: Date.parse("2026-11-25T19:00:00.000Z"), latencyMs: 1.5, ok: true },
      { startMs: Date.parse("2026-11-25T19:00:00.001Z"), latencyMs: 2, ok: false },
      { startMs: Date.parse("2026-11-25T19:00:00.002Z"), latencyMs: 9, ok: false },
    ]);
  });
});
