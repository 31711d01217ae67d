/**
 * The decision memo never changes a decision: memo on and off answer the same over many generated inputs
 * (repeats included), an engine of a new bundle revision answers from its own policy, never from the memo
 * of the old one, and denies the engine makes itself (bad input, a trap) are not kept. Its bounds (entries,
 * bytes) evict the least recently used entry; what it hands out cannot be changed by a caller.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { DecisionMemo, ENTRY_OVERHEAD_BYTES } from "../../src/engine/decision-memo.js";
import { loadEngine, type Decision, type DecisionInput, type InProcessEngine } from "../../src/engine/index.js";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { requireBundle } from "../support/bundle.js";
import { controlledEngine } from "../support/engine.js";
import { bundleWithData } from "../service/bundles.js";
import { seededRandom as random } from "../support/random.js";

const TENANT_A = "3f7c1a52-8d1e-4b7a-9c3e-5a2b6d8e9f01";
const TENANT_B = "9d2e4f61-0a3b-4c5d-8e7f-1a2b3c4d5e6f";
const TEMPLATES = (
  JSON.parse(readFileSync(join(PROJECT_ROOT, "data", "routes.json"), "utf8")) as { routes: { template: string }[] }
).routes.map((r) => r.template);
const ROLES = [
  "enseignant_jeune",
  "directeur_jeune",
  "eleve_jeune",
  "parent_eleve_jeune",
  "enseignant_adulte",
  "eleve_adulte",
  "directeur_adulte",
];

/** Inputs over every route template, methods, tenants, roles, flows, modes. */
function generatedInputs(n: number, seed: number): DecisionInput[] {
  const rnd = random(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  return Array.from({ length: n }, (): DecisionInput => {
    const path = pick([...TEMPLATES, "/v9/unknown", "/v1/roles/x"]).replace(/\{[^}]+\}/g, () =>
      pick(["ORG001", "42", "J1", "é"]),
    );
    const user = rnd() < 0.8;
    return {
      method: pick(["GET", "GET", "GET", "POST", "DELETE"]),
      path,
      token: user
        ? {
            sub: pick(["u1", "u2", "u3"]),
            auth_time: 1,
            idp: "local",
            scope: pick([["apiclients"], ["openid"], ["openid", "apiclients"]]),
            tenant_id: pick([TENANT_A, TENANT_B]),
          }
        : { client_id: pick(["app1", "app2"]), scope: ["apiclients"], tenant_id: TENANT_A },
      roles: rnd() < 0.2 ? [] : [pick(ROLES)],
      synced: rnd() < 0.9,
      role_check: rnd() < 0.8 ? "enforce" : "audit",
    };
  });
}

let plain: InProcessEngine;
let memoised: InProcessEngine;
const counts = { hits: 0, misses: 0 };
beforeAll(async () => {
  plain = await loadEngine(requireBundle());
  memoised = await loadEngine(requireBundle(), { memo: { entries: 64, counts } });
});

describe("a memo never changes a decision", () => {
  it("memo on and off answer the same over 3000 generated inputs, answering many from the memo", () => {
    // 3000 draws from 300 distinct inputs, skewed so that some repeat often and some rarely.
    const pool = generatedInputs(300, 13);
    const rnd = random(17);
    const inputs = Array.from({ length: 3000 }, () => pool[Math.floor(rnd() ** 2 * pool.length)]!);
    const reasons = new Set<string>();
    for (const input of inputs) {
      const expected = plain.decide(input);
      expect(memoised.decide(input)).toEqual(expected);
      reasons.add(expected.reason);
    }
    // The inputs cover allows and denies of several kinds, and the small memo both hit and evicted.
    expect(reasons.size).toBeGreaterThanOrEqual(5);
    expect(counts.hits).toBeGreaterThan(300);
    expect(counts.misses).toBeGreaterThan(300);
    expect(counts.hits + counts.misses).toBe(3000);
  });

  it("an engine of a new bundle revision answers from its own policy, not from the old memo", async () => {
    const input: DecisionInput = {
      method: "GET",
      path: "/v2/ORG001/elevesJeunes/J1/absences",
      token: { sub: "u1", auth_time: 1, idp: "local", scope: ["apiclients"], tenant_id: TENANT_A },
      roles: ["enseignant_jeune"],
      synced: true,
      role_check: "enforce",
    };
    for (let i = 0; i < 3; i++) expect(memoised.decide(input)).toMatchObject({ allow: true });
    // The same input under a bundle whose route no longer lists the role.
    const narrowed = await bundleWithData(
      "narrowed",
      (d: { catalog: { routes: { template: string; allowed: string[] }[] } }) => {
        const route = d.catalog.routes.find(
          (r) => r.template === "/v2/{codeOrganisme}/elevesJeunes/{idEleveJeune}/absences",
        )!;
        route.allowed = route.allowed.filter((r) => r !== "enseignant_jeune");
      },
    );
    const next = await loadEngine(narrowed, { memo: { entries: 64 } });
    expect(next.revision).not.toBe(memoised.revision);
    expect(next.decide(input)).toMatchObject({ allow: false, reason: "role_not_allowed" });
    expect(memoised.decide(input)).toMatchObject({ allow: true });
  });

  it("keeps no deny the engine made itself: a trap's policy_error is not answered again", async () => {
    const input = generatedInputs(1, 99)[0]!;
    const controlled = await controlledEngine({ entries: 64 });
    const fresh = { ...input, path: "/v2/ORG001/elevesJeunes/never-seen/absences" };
    // Missed twice with a trap each time: the second miss would store an answer, were it kept.
    const restore = controlled.override(() => {
      throw Object.assign(new Error("unreachable"), { name: "RuntimeError" });
    });
    expect(controlled.engine.decide(fresh)).toMatchObject({ reason: "policy_error" });
    expect(controlled.engine.decide(fresh)).toMatchObject({ reason: "policy_error" });
    restore();
    expect(controlled.engine.decide(fresh)).toEqual(plain.decide(fresh));
  });

  it("validates before it looks up: an input that stringifies like a known one but is invalid is refused", () => {
    const input = generatedInputs(1, 7)[0]!;
    memoised.decide(input);
    memoised.decide(input);
    // JSON.stringify drops a member whose value is undefined: same text, yet not a valid input.
    const sneaky = { ...input, admin: undefined } as unknown as DecisionInput;
    expect(JSON.stringify(sneaky)).toBe(JSON.stringify(input));
    expect(memoised.decide(sneaky)).toEqual(plain.decide(sneaky));
    expect(memoised.decide(sneaky)).toMatchObject({ reason: "input_invalid" });
  });

  it("hands out decisions no caller can change for the next one", () => {
    const input = generatedInputs(1, 5)[0]!;
    memoised.decide(input);
    const first = memoised.decide(input);
    expect(() => {
      (first as { reason: string }).reason = "changed";
    }).toThrow(TypeError);
    expect(memoised.decide(input)).toEqual(plain.decide(input));
  });
});

describe("DecisionMemo admission and bounds", () => {
  /** A decision whose message makes its JSON text `size` characters longer than with an empty message. */
  const decision = (reason: string, size = 0): Decision => ({
    allow: false,
    status: 403,
    reason,
    message: "m".repeat(size),
    flow: null,
    route: null,
    deprecated: false,
    mode: "enforce",
    would_deny: null,
  });
  /** Offers a decision twice, as two misses of the same key do: the second offer stores it. */
  const store = (memo: DecisionMemo, key: string, size = 0) => {
    memo.set(key, decision(key, size));
    memo.set(key, decision(key, size));
  };

  it("stores a decision the second time its key is missed, not the first", () => {
    const memo = new DecisionMemo({ entries: 2 });
    memo.set("a", decision("a"));
    expect(memo.get("a")).toBeUndefined();
    memo.set("a", decision("a"));
    expect(memo.get("a")?.reason).toBe("a");
    // The doorkeeper has one slot per entry: with one, a newer once-missed key takes the older one's place.
    const single = new DecisionMemo({ entries: 1 });
    single.set("x", decision("x"));
    single.set("y", decision("y"));
    single.set("x", decision("x"));
    expect(single.get("x")).toBeUndefined();
    single.set("x", decision("x"));
    expect(single.get("x")?.reason).toBe("x");
  });

  it("keeps at most `entries`, evicting the least recently used", () => {
    const counts = { hits: 0, misses: 0 };
    const memo = new DecisionMemo({ entries: 2, counts });
    store(memo, "a");
    store(memo, "b");
    expect(memo.get("a")?.reason).toBe("a"); // a is now the most recently used
    store(memo, "c");
    expect(memo.get("b")).toBeUndefined();
    expect([memo.get("a")?.reason, memo.get("c")?.reason]).toEqual(["a", "c"]);
    expect(counts).toEqual({ hits: 3, misses: 1 });
  });

  it("keeps at most `bytes`, and does not keep an entry larger than the whole budget", () => {
    // Every one-letter key's entry has the same size: its key and its decision's JSON text, 2 bytes a character.
    const entry = 2 * (1 + JSON.stringify(decision("a", 100)).length) + ENTRY_OVERHEAD_BYTES;
    const memo = new DecisionMemo({ entries: 100, bytes: 2 * entry });
    store(memo, "a", 100);
    store(memo, "b", 100);
    expect([memo.get("a")?.reason, memo.get("b")?.reason]).toEqual(["a", "b"]);
    store(memo, "c", 100);
    // Two entries fill the budget: the third evicts the least recently used, a.
    expect([memo.get("a"), memo.get("b")?.reason, memo.get("c")?.reason]).toEqual([undefined, "b", "c"]);
    store(memo, "huge", 10_000);
    expect([memo.get("huge"), memo.get("b")?.reason, memo.get("c")?.reason]).toEqual([undefined, "b", "c"]);
  });

  it.each([0, -1, 1.5])("refuses %s entries", (entries) => {
    expect(() => new DecisionMemo({ entries })).toThrow(/whole number >= 1/);
  });

  it("loadEngine with 0 entries has no memo", async () => {
    const none = { hits: 0, misses: 0 };
    const engine = await loadEngine(requireBundle(), { memo: { entries: 0, counts: none } });
    const input = generatedInputs(1, 3)[0]!;
    for (let i = 0; i < 3; i++) engine.decide(input);
    expect(none).toEqual({ hits: 0, misses: 0 });
  });
});
