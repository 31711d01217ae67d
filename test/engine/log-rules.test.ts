/**
 * The decision-log rules evaluated on the parts of an event they read (the bundle's log_rules_reads): the same
 * answer as on the whole event, one evaluation per distinct part (a memo per bundle), and every event evaluated
 * whole when the bundle does not say what the rules read.
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { readBundle, type Bundle } from "../../src/engine/read-bundle.js";
import { PolicyInstance } from "../../src/engine/policy-instance.js";
import { logRulesOf, MEMO_ENTRIES, project, readsOf } from "../../src/engine/log-rules.js";
import { requireBundle } from "../support/bundle.js";

let bundle: Bundle;
beforeAll(async () => {
  bundle = await readBundle(readFileSync(requireBundle()), "bundle", []);
});

/** The project's instance, counting the JSON texts evaluated. */
function counted(): { instance: PolicyInstance; seen: string[] } {
  const instance = new PolicyInstance(bundle, "bundle");
  const seen: string[] = [];
  const evaluateJson = instance.evaluateJson.bind(instance);
  instance.evaluateJson = (id, json) => (seen.push(json), evaluateJson(id, json));
  return { instance, seen };
}

function event(i: number, token: Record<string, unknown>): Record<string, unknown> {
  return {
    labels: { id: "l", version: "0" },
    decision_id: `d-${i}`,
    path: "portier/decision",
    input: { method: "GET", path: `/v2/ORG001/eleves/${i}`, token, roles: [] },
    result: { allow: true, reason: "allowed" },
    timestamp: new Date(i).toISOString(),
    req_id: i,
  };
}

/** The event's text as the pipeline gives it: asked for when the rules read the event whole. */
const encoding = (e: Record<string, unknown>) => () => JSON.stringify(e);
const encoded = (e: Record<string, unknown>): [Record<string, unknown>, () => string] => [e, encoding(e)];

const TOKENS = [
  { sub: "a", idp: "local" },
  { sub: "a", idp: "local", nonce: "n", at_hash: "h" },
  { sub: "b", s_hash: "s" },
  {},
];

describe("the decision-log rules on the parts of an event they read", () => {
  it("the project's bundle says the rules read input.input.token", () => {
    expect(readsOf(bundle.data)).toEqual([["input", "token"]]);
  });

  it("answer as the whole event does, evaluating each distinct token once", () => {
    const whole = logRulesOf(new PolicyInstance(bundle, "bundle"), undefined)!;
    const { instance, seen } = counted();
    const parts = logRulesOf(instance, readsOf(bundle.data))!;
    for (let i = 0; i < 40; i++) {
      const e = event(i, TOKENS[i % TOKENS.length]!);
      expect(parts.evaluate(e, encoding(e))).toEqual(whole.evaluate(e, encoding(e)));
    }
    expect(seen).toHaveLength(TOKENS.length);
    expect(seen[1]).toBe('{"input":{"token":{"sub":"a","idp":"local","nonce":"n","at_hash":"h"}}}');
  });

  it("keep at most MEMO_ENTRIES answers, the oldest going first", () => {
    const { instance, seen } = counted();
    const rules = logRulesOf(instance, readsOf(bundle.data))!;
    for (let i = 0; i <= MEMO_ENTRIES; i++) rules.evaluate(...encoded(event(i, { sub: `s-${i}` })));
    expect(seen).toHaveLength(MEMO_ENTRIES + 1);
    rules.evaluate(...encoded(event(0, { sub: `s-${MEMO_ENTRIES}` })));
    expect(seen).toHaveLength(MEMO_ENTRIES + 1);
    rules.evaluate(...encoded(event(0, { sub: "s-0" })));
    expect(seen).toHaveLength(MEMO_ENTRIES + 2);
  });

  it("evaluate every event whole when the bundle does not say what they read", () => {
    const { instance, seen } = counted();
    const rules = logRulesOf(instance, undefined)!;
    for (let i = 0; i < 3; i++) {
      const e = event(i, TOKENS[1]!);
      rules.evaluate(e, i === 2 ? () => '{"given":1}' : encoding(e));
    }
    expect(seen).toEqual([JSON.stringify(event(0, TOKENS[1]!)), JSON.stringify(event(1, TOKENS[1]!)), '{"given":1}']);
  });

  it.each([
    [[["input", "token"]], { input: { token: { a: 1 } } }],
    [[["result", "allow"], ["labels"]], { result: { allow: true }, labels: { id: "l" } }],
    [
      [
        ["input", "missing", "x"],
        ["req_id", "deeper"],
      ],
      {},
    ],
    [[["input", "roles", "0"]], {}],
  ])("project %j", (reads, want) => {
    const e = { labels: { id: "l" }, input: { token: { a: 1 }, roles: ["r"] }, result: { allow: true }, req_id: 3 };
    expect(project(e, reads)).toEqual(want);
  });

  it.each([
    [{}, undefined],
    [{ portier_bundle: { log_rules_reads: [["a"], []] } }, undefined],
    [{ portier_bundle: { log_rules_reads: [["a", 1]] } }, undefined],
    [{ portier_bundle: { log_rules_reads: "a" } }, undefined],
    [{ portier_bundle: { log_rules_reads: [] } }, []],
  ])("reads of data %j", (data, want) => {
    expect(readsOf(data)).toEqual(want);
  });
});
