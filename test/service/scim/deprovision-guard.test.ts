/**
 * The de-provisioning guard's arithmetic, on a clock of the test's: the floor, the share of the users synced
 * before the window's removals, and the window sliding (removals older than it no longer count).
 */
import { describe, expect, it } from "vitest";
import { DeprovisionGuard } from "../../../src/service/scim/deprovision-guard.js";

describe("DeprovisionGuard", () => {
  it.each([
    // [removed already in the window, users this step removes, synced now, held?]
    [0, 10, 1000, false], // within the floor
    [0, 11, 1000, false], // 11 of 1000: 1.1%
    [90, 10, 910, false], // 100 of 1000: exactly the share
    [90, 11, 910, true], // 101 of 1000
    [0, 11, 50, true], // 11 of 50, above the floor
    [0, 0, 0, false], // nothing removed
  ])("%i removed, then %i of %i synced: held %s", (before, users, synced, held) => {
    let t = 0;
    const guard = new DeprovisionGuard({ maxShare: 0.1, windowMs: 60_000, floor: 10, now: () => t });
    guard.removed(before);
    t = 1000;
    expect(guard.refusal(users, synced) !== undefined).toBe(held);
  });

  it("removals leave the window as it slides, and Retry-After says when", () => {
    let t = 0;
    const guard = new DeprovisionGuard({ maxShare: 0.1, windowMs: 60_000, floor: 10, now: () => t });
    guard.removed(100);
    t = 20_000;
    expect(guard.refusal(1, 900)).toMatch(/^held: this change would take 101 of 1000 synced users out/);
    expect(guard.retryAfterSeconds()).toBe(40);
    expect(guard.held).toBe(1);
    t = 60_001;
    expect(guard.refusal(1, 900)).toBeUndefined();
  });

  it("a share of 1 holds nothing", () => {
    const guard = new DeprovisionGuard({ maxShare: 1, windowMs: 60_000, floor: 0 });
    expect(guard.refusal(1000, 0)).toBeUndefined();
  });
});
