/**
 * From a recorded decision to the stdout line and the shipped event, with the project's bundle's mask and drop
 * rules (portier/log/mask, portier/log/drop): both masked alike, the caller's objects untouched, a failing or
 * malformed rule dropping the event (counted), never writing it unmasked, and the request path only enqueuing.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { pino } from "pino";
import { loadEngine, type InProcessEngine, type LogRules } from "../../../src/engine/index.js";
import { DecisionLogPipeline } from "../../../src/service/decision-logs/pipeline.js";
import { applyMask, parseMask, MaskRuleError } from "../../../src/service/decision-logs/mask.js";
import { newStats } from "../../../src/service/decision-logs/stats.js";
import { decisionLine, type DecisionLine } from "../../../src/service/decision-logs/line.js";
import type { DecisionRecord } from "../../../src/service/decide/record.js";
import { requireBundle } from "../../support/bundle.js";

let engine: InProcessEngine;
beforeAll(async () => {
  engine = await loadEngine(requireBundle());
});

/** A refused token's record (the stage it failed at leaves no route or flow), with `token` as the input's claims. */
function fields(token: Record<string, unknown>): DecisionRecord {
  return {
    decision_id: "d-1",
    time: Date.now(),
    request: {
      adapter: "decide",
      method: "GET",
      path: "/v2/ORG001/centres",
      raw_path: undefined,
      client_address: "10.0.0.9",
      request_id: "req-7",
      traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    },
    input: { method: "GET", path: "/v2/ORG001/centres", token, roles: [], synced: false, role_check: "enforce" },
    result: {
      route: null,
      flow: null,
      client_id: null,
      sub: "5f1c",
      tenant_id: "t1",
      roles: [],
      allow: false,
      status: 401,
      reason: "token_shape_unknown",
      message: "an ID token is not an access token",
      would_deny: null,
    },
    revision: "r1",
    trace_id: undefined,
    span_id: undefined,
    detail: undefined,
    latency_ms: 0.5,
  };
}

function pipeline(rules: () => LogRules | undefined) {
  const lines: DecisionLine[] = [];
  const shipped: Record<string, unknown>[] = [];
  const stats = newStats();
  let logged = "";
  const p = new DecisionLogPipeline({
    sinks: [
      { wantsEvent: false, write: ({ record }) => lines.push(decisionLine(record)) },
      { wantsEvent: true, write: ({ encoded }) => shipped.push(JSON.parse(encoded()) as Record<string, unknown>) },
    ],
    rules,
    event: { labels: { id: "i-1", version: "0.1.0", env: "test" }, bundleName: "portier" },
    stats,
    logger: pino({}, { write: (l: string) => void (logged += l) }),
  });
  return { p, lines, shipped, stats, logged: () => logged };
}

const ID_TOKEN = { sub: "5f1c", idp: "local", nonce: "n-1", at_hash: "half-of-a-token-hash" };

describe("the decision-log pipeline", () => {
  it("only enqueues on the request path; the next turn of the event loop writes and ships", async () => {
    const { p, lines, shipped } = pipeline(() => engine.logRules);
    p.record(fields({ sub: "5f1c" }));
    expect(lines).toEqual([]);
    expect(shipped).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(lines).toHaveLength(1);
    expect(shipped).toHaveLength(1);
  });

  it("builds OPA's event: path, input, result, bundles, labels, requested_by, req_id, trace ids, the request", () => {
    const { p, shipped } = pipeline(() => undefined);
    p.record(fields({ sub: "5f1c" }));
    p.process();
    expect(shipped[0]).toEqual({
      labels: { id: "i-1", version: "0.1.0", env: "test" },
      decision_id: "d-1",
      trace_id: "0af7651916cd43dd8448eb211c80319c",
      span_id: "b7ad6b7169203331",
      path: "portier/decision",
      input: fields({ sub: "5f1c" }).input,
      result: {
        allow: false,
        status: 401,
        reason: "token_shape_unknown",
        message: "an ID token is not an access token",
        flow: null,
        route: null,
        client_id: null,
        sub: "5f1c",
        tenant_id: "t1",
        roles: [],
        would_deny: null,
      },
      bundles: { portier: { revision: "r1" } },
      requested_by: "10.0.0.9",
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) as unknown,
      req_id: 1,
      request_context: {
        adapter: "decide",
        http: { method: "GET", path: "/v2/ORG001/centres", headers: { "x-request-id": ["req-7"] } },
      },
    });
  });

  it("takes trace_id and span_id from the decision's span when traced, before the gateway's traceparent", () => {
    const { p, shipped } = pipeline(() => undefined);
    p.record({ ...fields({ sub: "5f1c" }), trace_id: "4bf92f3577b34da6a3ce929d0e0e4736", span_id: "00f067aa0ba902b7" });
    p.process();
    expect(shipped[0]).toMatchObject({ trace_id: "4bf92f3577b34da6a3ce929d0e0e4736", span_id: "00f067aa0ba902b7" });
  });

  it("masks the line and the event alike with the bundle's rule, the caller's input left whole", () => {
    const { p, lines, shipped } = pipeline(() => engine.logRules);
    const f = fields(ID_TOKEN);
    p.record(f);
    p.process();
    const event = shipped[0]!;
    expect(event.erased).toEqual(expect.arrayContaining(["/input/token/nonce", "/input/token/at_hash"]));
    expect(JSON.stringify(event)).not.toContain("half-of-a-token-hash");
    expect(JSON.stringify(lines[0])).not.toContain("half-of-a-token-hash");
    expect((lines[0]!.input as { token: unknown }).token).toEqual({ sub: "5f1c", idp: "local" });
    expect((f.input as { token: unknown }).token).toEqual(ID_TOKEN);
  });

  it("applies /result pointers to the line's fields, and upserts, as listed in erased and masked", () => {
    const rules: LogRules = {
      evaluate: () => ({
        drop: false,
        mask: ["/result/sub", { op: "upsert", path: "/input/token/sub", value: "***" }],
      }),
    };
    const { p, lines, shipped } = pipeline(() => rules);
    p.record(fields({ sub: "5f1c" }));
    p.process();
    expect(shipped[0]).toMatchObject({ erased: ["/result/sub"], masked: ["/input/token/sub"] });
    expect((shipped[0]!.result as Record<string, unknown>).sub).toBeUndefined();
    expect(lines[0]!.sub).toBeUndefined();
    expect((lines[0]!.input as { token: { sub: string } }).token.sub).toBe("***");
  });

  it("leaves out what drop drops (counted apart), and drops the event of a failing rule", () => {
    const cases: [LogRules, keyof ReturnType<typeof newStats>["dropped"] | "ruleDropped"][] = [
      [{ evaluate: () => ({ drop: true, mask: [] }) }, "ruleDropped"],
      [
        {
          evaluate: () => {
            throw new Error("wasm trap");
          },
        },
        "rule_error",
      ],
      [{ evaluate: () => ({ drop: false, mask: ["/labels/id"] }) }, "rule_error"],
      [{ evaluate: () => ({ drop: false, mask: "not a set" }) }, "rule_error"],
      [{ evaluate: () => ({ drop: "yes", mask: [] }) }, "rule_error"],
    ];
    for (const [rules, counted] of cases) {
      const { p, lines, shipped, stats, logged } = pipeline(() => rules);
      p.record(fields(ID_TOKEN));
      p.process();
      expect(lines).toEqual([]);
      expect(shipped).toEqual([]);
      if (counted === "ruleDropped") expect(stats.ruleDropped).toBe(1);
      else {
        expect(stats.dropped[counted]).toBe(1);
        expect(logged()).toContain("decision_log_rule_failed");
      }
    }
  });
});

describe("with the stdout line only", () => {
  /** A pipeline whose one sink reads no event, and what it got. */
  function lineOnly(rules: () => LogRules | undefined) {
    const got: { line: DecisionLine; event: unknown }[] = [];
    const stats = newStats();
    const p = new DecisionLogPipeline({
      sinks: [{ wantsEvent: false, write: ({ record, event }) => got.push({ line: decisionLine(record), event }) }],
      rules,
      event: { labels: { id: "i-1" }, bundleName: "portier" },
      stats,
      logger: pino({ level: "silent" }),
    });
    return { p, got, stats };
  }

  it("asks the bundle's rules (they read input.token) on the input and result alone: masked, no event built", () => {
    expect(engine.logRules?.reads).toEqual([["input", "token"]]);
    const { p, got } = lineOnly(() => engine.logRules);
    p.record(fields(ID_TOKEN));
    p.process();
    expect(got).toHaveLength(1);
    expect(got[0]!.event).toBeUndefined();
    expect(JSON.stringify(got[0]!.line)).not.toContain("half-of-a-token-hash");
    expect((got[0]!.line.input as { token: unknown }).token).toEqual({ sub: "5f1c", idp: "local" });
  });

  it("gives rules that read more than the input and result the whole event, and drops what they drop", () => {
    const seen: Record<string, unknown>[] = [];
    const rules: LogRules = {
      reads: [["request_context", "adapter"]],
      evaluate: (event) => {
        seen.push(event);
        return { drop: (event.request_context as { adapter: string }).adapter === "decide", mask: [] };
      },
    };
    const { p, got, stats } = lineOnly(() => rules);
    p.record(fields({ sub: "5f1c" }));
    p.process();
    expect(seen[0]).toMatchObject({ decision_id: "d-1", path: "portier/decision" });
    expect(got).toEqual([]);
    expect(stats.ruleDropped).toBe(1);
  });
});

describe("mask operations", () => {
  it("refuse pointers outside /input and /result and bad shapes, naming the position", () => {
    expect(() => parseMask(["/input/a", "/decision_id"])).toThrow(/mask\[1\]: "\/decision_id" is outside/);
    expect(() => parseMask([{ op: "replace", path: "/input/a" }])).toThrow(/mask\[0\]\.op/);
    expect(() => parseMask([{ op: "upsert", path: "/input/a" }])).toThrow(MaskRuleError);
    expect(() => parseMask([42])).toThrow(/mask\[0\]: must be a string or an object/);
  });

  it("erase what exists (escaped keys included), skip what does not, upsert creating the last key", () => {
    const target = { input: { "a/b": 1, c: { d: 2 } }, result: {} };
    const out = applyMask(
      target,
      parseMask(["/input/a~1b", "/input/missing/x", { op: "upsert", path: "/result/new", value: 1 }]),
    );
    expect(out).toEqual({ erased: ["/input/a~1b"], masked: ["/result/new"] });
    expect(target).toEqual({ input: { c: { d: 2 } }, result: { new: 1 } });
  });
});
