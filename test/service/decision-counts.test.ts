/**
 * The plain decision counters against prom-client as the oracle: the same decisions counted by today's
 * Counter and Histogram (as metrics.ts declared them) and by DecisionCounts give the same metrics text and
 * the same JSON, and two workers' JSON aggregate (AggregatorRegistry, --workers N) to the same text.
 */
import { describe, expect, it } from "vitest";
import { AggregatorRegistry, Counter, Histogram, Registry } from "prom-client";
import { DECISION_BUCKETS, DecisionCounts } from "../../src/service/decision-counts.js";

type Decided = [allow: boolean, reason: string, flow: string, adapter: string, seconds: number];

function oracle() {
  const registry = new Registry();
  const decisions = new Counter({
    name: "portier_decisions_total",
    help: "Decisions by result, reason and flow",
    labelNames: ["allow", "reason", "flow", "adapter"] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: "portier_decision_duration_seconds",
    help: "Decision latency (token verify, directory, policy)",
    labelNames: ["adapter"] as const,
    buckets: [...DECISION_BUCKETS],
    registers: [registry],
  });
  const rejected = new Counter({
    name: "portier_requests_rejected_total",
    help: "Requests answered before any decision (unreadable, forged gateway headers, too large, too slow)",
    labelNames: ["adapter", "reason"] as const,
    registers: [registry],
  });
  const count = ([allow, reason, flow, adapter, seconds]: Decided) => {
    decisions.inc({ allow: String(allow), reason, flow, adapter });
    latency.observe({ adapter }, seconds);
  };
  const reject = (adapter: string, reason: string) => rejected.inc({ adapter, reason });
  return { registry, count, reject };
}

function plain() {
  const registry = new Registry();
  const counts = new DecisionCounts(registry);
  return {
    registry,
    count: (d: Decided) => counts.count(...d),
    reject: (adapter: string, reason: string) => counts.reject(adapter, reason),
  };
}

const TRAFFIC: Decided[] = [
  [true, "allowed", "accessCode", "decide", 0.0003],
  [false, "token_missing", "none", "forward-auth/nginx", 0.00001],
  [true, "allowed", "accessCode", "decide", 0.0001], // exactly on a bound: counted in it
  [false, "route_unknown", "application", "envoy", 0.7], // above the largest bound: +Inf only
  [false, 'odd "reason"\\ with\nnewline', "none", "decide", 0.05],
  [true, "allowed", "application", "forward-auth/caddy", 0.0011],
  [true, "allowed", "accessCode", "decide", 0.1],
  [false, "token_missing", "none", "forward-auth/nginx", 0.5],
];

describe("DecisionCounts scrapes as prom-client's Counter and Histogram", () => {
  it("nothing counted yet: the same text", async () => {
    expect(await plain().registry.metrics()).toBe(await oracle().registry.metrics());
  });

  it("the same text and JSON after the same decisions", async () => {
    const a = oracle();
    const b = plain();
    for (const d of TRAFFIC) {
      a.count(d);
      b.count(d);
    }
    for (const side of [a, b]) {
      side.reject("decide", "invalid_json");
      side.reject("forward-auth/nginx", "request_invalid");
      side.reject("decide", "invalid_json");
    }
    expect(await b.registry.metrics()).toBe(await a.registry.metrics());
    expect(await b.registry.metrics()).toContain(
      'portier_requests_rejected_total{adapter="decide",reason="invalid_json"} 2',
    );
    expect(JSON.parse(JSON.stringify(await b.registry.getMetricsAsJSON()))).toEqual(
      JSON.parse(JSON.stringify(await a.registry.getMetricsAsJSON())),
    );
  });

  it("two workers aggregate to the same text", async () => {
    const workers = (make: () => { registry: Registry; count: (d: Decided) => void }) => {
      const one = make();
      const two = make();
      TRAFFIC.forEach((d, i) => (i % 3 === 0 ? one : two).count(d));
      return Promise.all(
        [one, two].map(
          async (w) =>
            JSON.parse(JSON.stringify(await w.registry.getMetricsAsJSON())) as Parameters<
              typeof AggregatorRegistry.aggregate
            >[0][number],
        ),
      );
    };
    const expected = AggregatorRegistry.aggregate(await workers(oracle));
    const actual = AggregatorRegistry.aggregate(await workers(plain));
    expect(await actual.metrics()).toBe(await expected.metrics());
    expect(await actual.metrics()).toContain(
      'portier_decisions_total{allow="true",reason="allowed",flow="accessCode",adapter="decide"} 3',
    );
  });
});
