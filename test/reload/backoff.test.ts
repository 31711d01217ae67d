/**
 * The one back-off: the first wait after a failure, doubling with each further one up to the cap, and a jitter
 * that draws the wait between (1 - jitter) of it and all of it.
 */
import { describe, expect, it } from "vitest";
import { backoffMs } from "../../src/reload/index.js";

describe("backoffMs", () => {
  it.each([
    // failures, firstMs, maxMs, wait
    [0, 1000, 10_000, 1000],
    [1, 1000, 10_000, 1000],
    [2, 1000, 10_000, 2000],
    [4, 1000, 10_000, 8000],
    [5, 1000, 10_000, 10_000],
    [200, 250, 30_000, 30_000],
    [3, 20, 20, 20],
  ])("after %i failures from %i ms up to %i ms: %i ms", (failures, firstMs, maxMs, wait) => {
    expect(backoffMs(failures, { firstMs, maxMs })).toBe(wait);
  });

  it.each([
    [0, 500],
    [0.5, 750],
    [0.998, 999],
  ])("with jitter 0.5 and a draw of %d: %i ms of a 1000 ms wait", (draw, wait) => {
    expect(backoffMs(3, { firstMs: 250, maxMs: 30_000, jitter: 0.5, random: () => draw })).toBeCloseTo(wait, 6);
  });
});
