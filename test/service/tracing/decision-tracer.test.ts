/**
 * The decision span, with an exporter that keeps the spans in place of OTLP: parented on the W3C or B3 context
 * given (W3C first), a root span without one, the attributes and the two child steps when sampled, nothing
 * exported when the gateway's flag or the sampler says not sampled (the ids are still there for the log
 * line), and an ambiguous (repeated) traceparent not used.
 */
import { afterEach, describe, expect, it } from "vitest";
import { pino } from "pino";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace";
import { startDecisionTracer, type DecisionTracer } from "../../../src/service/tracing/decision-tracer.js";
import { until } from "../../support/until.js";
import type { TracingSettings } from "../../../src/service/tracing/tracing-env.js";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT = "00f067aa0ba902b7";
const B3_TRACE = "80f198ee56343ba864fe8b2a57d3eff7";
const B3_PARENT = "e457b5a2e4d86bd1";
const SETTINGS: TracingSettings = {
  url: "http://127.0.0.1:1/v1/traces",
  serviceName: "t",
  resourceAttributes: {},
  sampler: "parentbased_always_on",
  ratio: 1,
  batch: {},
};
const FACTS = {
  decisionId: "d-1",
  allow: true,
  reason: "allowed",
  route: "/v1/{codeOrganisme}/x",
  flow: "accessCode",
  revision: "rev-1",
  failed: false,
};

const headers = (h: Record<string, string | string[]>) =>
  new Map(Object.entries(h).map(([k, v]) => [k, Array.isArray(v) ? v : [v]]));

let tracer: DecisionTracer | undefined;
afterEach(async () => {
  await tracer?.shutdown(1000);
  tracer = undefined;
});

async function setUp(settings: Partial<TracingSettings> = {}) {
  // Keeps what it is given (the SDK's InMemorySpanExporter forgets its spans on shutdown).
  const exported: ReadableSpan[] = [];
  const exporter: SpanExporter = {
    export(spans, done) {
      exported.push(...spans);
      done({ code: 0 });
    },
    shutdown: () => Promise.resolve(),
  };
  const lines: string[] = [];
  tracer = await startDecisionTracer(
    { ...SETTINGS, ...settings },
    pino({}, { write: (l: string) => void lines.push(l) }),
    exporter,
  );
  const flushed = async () => {
    await tracer!.shutdown(2000);
    tracer = undefined;
    return exported;
  };
  return { tracer, flushed, lines };
}

describe("startDecisionTracer", () => {
  it("parents the decision span on the gateway's traceparent, with its attributes and child steps", async () => {
    const { tracer, flushed } = await setUp();
    const d = tracer.start(
      "forward-auth/nginx",
      headers({ traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: "g=1" }),
    );
    expect(d.trace).toMatchObject({ traceId: TRACE, sampled: true });
    d.step("portier.verify_token")!.end();
    d.step("portier.evaluate")!.end();
    d.end(FACTS);
    const spans = await flushed();
    const decision = spans.find((s) => s.name === "portier.decide")!;
    expect(decision.spanContext().spanId).toBe(d.trace.spanId);
    expect(decision.parentSpanContext?.spanId).toBe(PARENT);
    expect(decision.spanContext().traceState?.get("g")).toBe("1");
    expect(decision.kind).toBe(1); // SERVER
    expect(decision.attributes).toEqual({
      "portier.adapter": "forward-auth/nginx",
      "portier.decision_id": "d-1",
      "portier.allow": true,
      "portier.reason": "allowed",
      "portier.route": "/v1/{codeOrganisme}/x",
      "portier.flow": "accessCode",
      "portier.bundle.revision": "rev-1",
    });
    const steps = spans.filter((s) => s.name !== "portier.decide");
    expect(steps.map((s) => s.name).sort()).toEqual(["portier.evaluate", "portier.verify_token"]);
    for (const s of steps) {
      expect(s.spanContext().traceId).toBe(TRACE);
      expect(s.parentSpanContext?.spanId).toBe(d.trace.spanId);
    }
  });

  it("reads B3 single and multi when no traceparent is given, and prefers traceparent", async () => {
    const { tracer, flushed } = await setUp();
    const single = tracer.start("envoy", headers({ b3: `${B3_TRACE}-${B3_PARENT}-1` }));
    const multi = tracer.start(
      "envoy",
      headers({ "x-b3-traceid": B3_TRACE, "x-b3-spanid": B3_PARENT, "x-b3-sampled": "1" }),
    );
    const both = tracer.start(
      "envoy",
      headers({ traceparent: `00-${TRACE}-${PARENT}-01`, b3: `${B3_TRACE}-${B3_PARENT}-1` }),
    );
    for (const d of [single, multi, both]) d.end(FACTS);
    expect([single, multi, both].map((d) => d.trace.traceId)).toEqual([B3_TRACE, B3_TRACE, TRACE]);
    const parents = (await flushed()).map((s) => s.parentSpanContext?.spanId);
    expect(parents).toEqual([B3_PARENT, B3_PARENT, PARENT]);
  });

  it("starts a root span without a usable context: none, malformed, or a traceparent sent twice", async () => {
    const { tracer, flushed } = await setUp();
    const cases = [
      undefined,
      headers({ traceparent: "00-nothex-00f067aa0ba902b7-01" }),
      headers({ traceparent: [`00-${TRACE}-${PARENT}-01`, `00-${B3_TRACE}-${B3_PARENT}-01`] }),
    ];
    const ds = cases.map((h) => tracer.start("decide", h));
    for (const d of ds) d.end(FACTS);
    for (const d of ds) expect([d.trace.traceId === TRACE, d.trace.traceId === B3_TRACE]).toEqual([false, false]);
    const spans = await flushed();
    expect(spans).toHaveLength(3);
    for (const s of spans) expect(s.parentSpanContext).toBeUndefined();
  });

  it("exports nothing for an unsampled decision, yet gives its ids", async () => {
    const { tracer, flushed } = await setUp();
    const d = tracer.start("forward-auth/nginx", headers({ traceparent: `00-${TRACE}-${PARENT}-00` }));
    expect(d.trace.traceId).toBe(TRACE);
    expect(d.trace.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(d.trace.sampled).toBe(false);
    expect(d.step("portier.evaluate")).toBeUndefined();
    d.end(FACTS);
    expect(await flushed()).toEqual([]);
  });

  it("follows the sampler from the environment: always_off records nothing, always_on ignores the flag", async () => {
    const off = await setUp({ sampler: "always_off" });
    off.tracer.start("decide", undefined).end(FACTS);
    expect(await off.flushed()).toEqual([]);
    const on = await setUp({ sampler: "always_on" });
    on.tracer.start("decide", headers({ traceparent: `00-${TRACE}-${PARENT}-00` })).end(FACTS);
    expect(await on.flushed()).toHaveLength(1);
  });

  it("marks a decision that failed in Portier as an error, a deny as not", async () => {
    const { tracer, flushed } = await setUp();
    tracer.start("decide", undefined).end({ ...FACTS, allow: false, reason: "role_not_allowed" });
    tracer.start("decide", undefined).end({ ...FACTS, allow: false, reason: "internal_error", failed: true });
    const [deny, failed] = await flushed();
    expect(deny!.status.code).toBe(0);
    expect(failed!.status).toEqual({ code: 2, message: "internal_error" });
  });

  it("leaves out the route, flow and revision a decision did not have", async () => {
    const { tracer, flushed } = await setUp();
    const unknown = { ...FACTS, allow: false, reason: "route_unknown", route: undefined, flow: undefined };
    tracer.start("forward-auth/caddy", undefined).end({ ...unknown, revision: undefined });
    const [span] = await flushed();
    // Strict: an attribute kept with an undefined value would fail it (toEqual would not tell).
    expect(span!.attributes).toStrictEqual({
      "portier.adapter": "forward-auth/caddy",
      "portier.decision_id": "d-1",
      "portier.allow": false,
      "portier.reason": "route_unknown",
    });
  });

  it("logs a failed export (a collector down) while it runs, never the endpoint's credentials", async () => {
    const lines: string[] = [];
    const logger = pino({}, { write: (l: string) => void lines.push(l) });
    // The real OTLP exporter, to a port nothing listens on; batches every 20 ms, exports given up after 1 s
    // (the exporter reads its timeout from the environment).
    const saved = process.env.OTEL_EXPORTER_OTLP_TIMEOUT;
    process.env.OTEL_EXPORTER_OTLP_TIMEOUT = "1000";
    try {
      const url = "http://user:s3cret@127.0.0.1:9/v1/traces";
      tracer = await startDecisionTracer({ ...SETTINGS, url, batch: { scheduledDelayMillis: 20 } }, logger);
    } finally {
      if (saved === undefined) delete process.env.OTEL_EXPORTER_OTLP_TIMEOUT;
      else process.env.OTEL_EXPORTER_OTLP_TIMEOUT = saved;
    }
    for (let i = 0; i < 3; i++) tracer.start("decide", undefined).end(FACTS);
    await until(() => lines.some((l) => l.includes('"event":"tracing_problem"')), 15_000, 50);
    const text = lines.join("");
    expect(text).toMatch(/"event":"tracing_problem","detail":"[^\n]*ECONNREFUSED/);
    expect(text).not.toContain("s3cret");
  });

  it("logs that tracing is on without the endpoint's credentials", async () => {
    const { lines } = await setUp({ url: "https://user:s3cret@collector.example/v1/traces" });
    expect(lines.join("")).toContain('"event":"tracing_on"');
    expect(lines.join("")).not.toContain("s3cret");
  });
});
