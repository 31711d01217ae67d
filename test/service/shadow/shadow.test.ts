/**
 * The shadow candidate's logic, with a scripted candidate engine: how a verdict compares with the enforced
 * answer, sampling, the bounded backlog, the decision's line written exactly once (after the verdict, or at
 * once when not shadowed), a candidate that throws or is not loaded, and the flush at stop.
 */
import { describe, expect, it } from "vitest";
import { candidateVerdict, compareVerdicts } from "../../../src/service/shadow/compare.js";
import { Shadow, type ShadowVerdict } from "../../../src/service/shadow/shadow.js";
import type { Decision, DecisionEngine, DecisionInput } from "../../../src/engine/types.js";
import { ALLOW, fixedPolicy } from "../../support/policy-snapshot.js";

const INPUT: DecisionInput = {
  method: "GET",
  path: "/v1/roles",
  token: { client_id: "m" },
  roles: [],
  synced: false,
  role_check: "enforce",
};
const DENY = (reason: string): Decision => ({ ...ALLOW, allow: false, status: 403, reason });

/** A candidate whose engine answers `answer(input)`; `loaded: false` has none. */
function candidate(answer: (input: DecisionInput) => Decision, loaded = true) {
  const engine: DecisionEngine = { decide: answer, roles: [], revision: "cand-1" };
  const { current } = fixedPolicy(loaded ? engine : undefined);
  return {
    current,
    status: () => ({
      source: "c.tar.gz",
      loaded,
      successfulRequests: 1,
      reloads: 0,
      reloadFailures: 0,
      consecutiveFailures: 0,
    }),
  };
}

/** A Shadow whose scheduled drains run only when the test says (`turn()`). */
function manual(
  answer: (input: DecisionInput) => Decision,
  o: { sample?: number; random?: () => number; maxBacklog?: number; batch?: number; loaded?: boolean } = {},
) {
  const turns: (() => void)[] = [];
  const shadow = new Shadow(candidate(answer, o.loaded ?? true), {
    sample: o.sample ?? 1,
    random: o.random,
    maxBacklog: o.maxBacklog,
    batch: o.batch,
    schedule: (run) => turns.push(run),
  });
  const turn = () => turns.splice(0).forEach((run) => run());
  return { shadow, turn, turns };
}

describe("comparison", () => {
  it.each([
    [{ allow: false, reason: "role_not_allowed" }, ALLOW, "new_allow"],
    [{ allow: true, reason: "allowed" }, DENY("route_unknown"), "new_deny"],
    [{ allow: false, reason: "role_not_allowed" }, DENY("route_unknown"), "other_reason"],
    [{ allow: false, reason: "route_unknown" }, DENY("route_unknown"), "same"],
    [{ allow: true, reason: "allowed" }, ALLOW, "same"],
  ])("enforced %j, candidate %j: %s", (enforced, decision, change) => {
    expect(compareVerdicts(enforced, candidateVerdict(decision))).toBe(change);
  });

  it("reads the candidate failing closed: an allow without status 200 is a deny", () => {
    expect(candidateVerdict({ ...ALLOW, status: 403 })).toEqual({ allow: false, reason: "allowed" });
    expect(compareVerdicts({ allow: true, reason: "allowed" }, candidateVerdict({ ...ALLOW, status: 403 }))).toBe(
      "new_deny",
    );
  });
});

describe("Shadow", () => {
  it("evaluates after the caller returns, on the same input, and reports only a difference", () => {
    const seen: DecisionInput[] = [];
    const { shadow, turn } = manual(
      (input) => (seen.push(input), input.path === "/v1/roles" ? ALLOW : DENY("route_unknown")),
    );
    const done: (ShadowVerdict | undefined)[] = [];
    expect(shadow.take(INPUT, { allow: false, reason: "role_not_allowed" }, (v) => done.push(v))).toBe(true);
    expect(shadow.take({ ...INPUT, path: "/v9" }, { allow: false, reason: "route_unknown" }, (v) => done.push(v))).toBe(
      true,
    );
    // Nothing evaluated yet: the answer goes first.
    expect(seen).toEqual([]);
    expect(done).toEqual([]);
    turn();
    expect(seen).toEqual([INPUT, { ...INPUT, path: "/v9" }]);
    expect(done).toEqual([{ allow: true, reason: "allowed", revision: "cand-1" }, undefined]);
    expect(shadow.status().decisions).toEqual({ new_allow: 1, new_deny: 0, other_reason: 0, same: 1 });
  });

  it("takes no decision without a policy input", () => {
    const { shadow } = manual(() => ALLOW);
    expect(shadow.take(undefined, { allow: false, reason: "token_missing" }, () => {})).toBe(false);
    expect(shadow.status().decisions.same).toBe(0);
  });

  it("samples: 0 never, 1 always, a share by the random draw", () => {
    const draws = [0.05, 0.5, 0.09, 0.95];
    const { shadow: tenth } = manual(() => ALLOW, { sample: 0.1, random: () => draws.shift()! });
    const taken = [1, 2, 3, 4].map(() => tenth.take(INPUT, { allow: true, reason: "allowed" }, () => {}));
    expect(taken).toEqual([true, false, true, false]);
    const { shadow: never } = manual(() => ALLOW, { sample: 0, random: () => 0 });
    expect(never.take(INPUT, { allow: true, reason: "allowed" }, () => {})).toBe(false);
    const { shadow: always } = manual(() => ALLOW, { sample: 1, random: () => 0.999999 });
    expect(always.take(INPUT, { allow: true, reason: "allowed" }, () => {})).toBe(true);
    expect(
      () =>
        new Shadow(
          candidate(() => ALLOW),
          { sample: 1.5 },
        ),
    ).toThrow(/0\.\.1/);
  });

  it("bounds the backlog: past it a decision is not taken, and counted as skipped", () => {
    const { shadow, turn } = manual(() => ALLOW, { maxBacklog: 3 });
    const taken = [1, 2, 3, 4, 5].map(() => shadow.take(INPUT, { allow: true, reason: "allowed" }, () => {}));
    expect(taken).toEqual([true, true, true, false, false]);
    expect(shadow.status()).toMatchObject({ backlog: 3, skipped: { backlog: 2, no_candidate: 0 } });
    turn();
    expect(shadow.status()).toMatchObject({ backlog: 0, decisions: { same: 3 } });
    expect(shadow.take(INPUT, { allow: true, reason: "allowed" }, () => {})).toBe(true);
  });

  it("evaluates a few per turn of the event loop and schedules the rest", () => {
    const { shadow, turn, turns } = manual(() => ALLOW, { batch: 2 });
    for (let i = 0; i < 5; i++) shadow.take(INPUT, { allow: true, reason: "allowed" }, () => {});
    expect(turns).toHaveLength(1);
    turn();
    expect(shadow.status()).toMatchObject({ backlog: 3, decisions: { same: 2 } });
    turn();
    turn();
    expect(shadow.status()).toMatchObject({ backlog: 0, decisions: { same: 5 } });
    expect(turns).toHaveLength(0);
  });

  it("reads a candidate that throws as failing closed, and writes the line (never crashes)", () => {
    const { shadow, turn } = manual(() => {
      throw new Error("boom");
    });
    const done: unknown[] = [];
    shadow.take(INPUT, { allow: true, reason: "allowed" }, (v) => done.push(v));
    shadow.take(INPUT, { allow: false, reason: "internal_error" }, (v) => done.push(v));
    expect(() => turn()).not.toThrow();
    expect(done).toEqual([{ allow: false, reason: "internal_error", revision: "cand-1" }, undefined]);
    expect(shadow.status().decisions).toMatchObject({ new_deny: 1, same: 1 });
  });

  it("skips and counts when no candidate is loaded (never takes the line)", () => {
    const { shadow } = manual(() => ALLOW, { loaded: false });
    expect(shadow.take(INPUT, { allow: true, reason: "allowed" }, () => {})).toBe(false);
    expect(shadow.status()).toMatchObject({ loaded: false, skipped: { no_candidate: 1 } });
  });

  it("flush evaluates everything waiting at once (the service's stop)", () => {
    const { shadow } = manual(() => DENY("role_not_allowed"), { batch: 1 });
    const done: unknown[] = [];
    for (let i = 0; i < 4; i++) shadow.take(INPUT, { allow: true, reason: "allowed" }, (v) => done.push(v));
    shadow.flush();
    expect(done).toHaveLength(4);
    expect(shadow.status()).toMatchObject({ backlog: 0, decisions: { new_deny: 4 } });
  });
});
