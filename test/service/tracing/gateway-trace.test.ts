/**
 * Which trace context each adapter reads, in process (the service's own startService, a tracer whose exporter
 * keeps the spans): Envoy's HTTP service and gRPC port read W3C, else B3 single or multi; gRPC takes the call's
 * metadata (the ext_authz span Envoy injects) before the checked request's headers; the forward-auth endpoints
 * read W3C only (B3 is not what nginx, Caddy or Traefik send), a trace header sent twice is not used; /decide
 * reads the caller's traceparent. Each decision's log line carries its span's trace_id and span_id.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as grpc from "@grpc/grpc-js";
import { pino } from "pino";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace";
import { startDecisionTracer } from "../../../src/service/tracing/decision-tracer.js";
import { makeKeys, machineToken, sampleServeArgs, serveInProcess, until, type InProcessService } from "../helpers.js";
import { envoyCheck, grpcClients, type GrpcClients } from "../grpc/client.js";

const T1 = "80f198ee56343ba864fe8b2a57d3eff7";
const S1 = "e457b5a2e4d86bd1";
const T2 = "4bf92f3577b34da6a3ce929d0e0e4736";
const S2 = "00f067aa0ba902b7";
const ALLOWED = "/v2/ORG001/elevesJeunes";

let svc: InProcessService;
let client: GrpcClients;
let token: string;
const exported: ReadableSpan[] = [];

beforeAll(async () => {
  const exporter: SpanExporter = {
    export(spans, done) {
      exported.push(...spans);
      done({ code: 0 });
    },
    shutdown: () => Promise.resolve(),
  };
  // Batches leave every 20 ms.
  const settings = {
    url: "http://127.0.0.1:1/v1/traces",
    serviceName: "t",
    sampler: "parentbased_always_on" as const,
    resourceAttributes: {},
    batch: { scheduledDelayMillis: 20 },
  };
  const tracer = await startDecisionTracer({ ...settings, ratio: 1 }, pino({ level: "silent" }), exporter);
  const keys = await makeKeys();
  svc = await serveInProcess([...sampleServeArgs(keys), "--grpc-port", "0"], {}, { tracer });
  client = grpcClients(svc.service.grpcAddress!);
  token = await machineToken(keys);
}, 60_000);

afterAll(async () => {
  client?.close();
  await svc?.stop();
});

/** The decision span of the answer with this decision id, once exported, and its log line. */
async function decisionOf(decisionId: string): Promise<{ span: ReadableSpan; line: Record<string, unknown> }> {
  let span: ReadableSpan | undefined;
  await until(
    () => (span = exported.find((s) => s.attributes["portier.decision_id"] === decisionId)) !== undefined,
    10_000,
    20,
  );
  const line = svc
    .output()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => l.event === "decision" && l.decision_id === decisionId)!;
  return { span: span!, line };
}

async function viaHttp(path: string, headers: Record<string, string | string[]>): Promise<string> {
  const res = await fetch(`${svc.url}${path}`, {
    headers: Object.entries(headers).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => [k, x]) : [[k, v]])) as [
      string,
      string,
    ][],
  });
  await res.arrayBuffer();
  return res.headers.get("x-portier-decision-id")!;
}

const nginx = (extra: Record<string, string | string[]>) => ({
  "x-original-method": "GET",
  "x-original-uri": ALLOWED,
  authorization: `Bearer ${token}`,
  ...extra,
});

/** Parent span id and trace id of a decision span; what its log line says. */
function joined(d: { span: ReadableSpan; line: Record<string, unknown> }) {
  expect(d.line).toMatchObject({ trace_id: d.span.spanContext().traceId, span_id: d.span.spanContext().spanId });
  return { trace: d.span.spanContext().traceId, parent: d.span.parentSpanContext?.spanId };
}

describe("trace context per adapter", () => {
  it("Envoy HTTP: B3 single, B3 multi, and W3C before B3", async () => {
    const auth = { authorization: `Bearer ${token}` };
    const single = await viaHttp(`/envoy${ALLOWED}`, { ...auth, b3: `${T1}-${S1}-1` });
    const multi = await viaHttp(`/envoy${ALLOWED}`, {
      ...auth,
      "x-b3-traceid": T1,
      "x-b3-spanid": S1,
      "x-b3-sampled": "1",
    });
    const both = await viaHttp(`/envoy${ALLOWED}`, { ...auth, b3: `${T1}-${S1}-1`, traceparent: `00-${T2}-${S2}-01` });
    expect(joined(await decisionOf(single))).toEqual({ trace: T1, parent: S1 });
    expect(joined(await decisionOf(multi))).toEqual({ trace: T1, parent: S1 });
    expect(joined(await decisionOf(both))).toEqual({ trace: T2, parent: S2 });
    expect((await decisionOf(single)).span.attributes["portier.adapter"]).toBe("envoy");
  });

  it("Envoy gRPC: the call's metadata first, else B3 in the checked request's headers", async () => {
    const headersOnly = await client.check(
      envoyCheck("GET", ALLOWED, { authorization: `Bearer ${token}`, b3: `${T1}-${S1}-1` }),
    );
    const metadata = new grpc.Metadata();
    metadata.set("traceparent", `00-${T2}-${S2}-01`);
    const both = await client.check(
      envoyCheck("GET", ALLOWED, { authorization: `Bearer ${token}`, b3: `${T1}-${S1}-1` }),
      undefined,
      metadata,
    );
    const idOf = (r: typeof both) =>
      (r.dynamic_metadata.fields.decision_id as { stringValue: string } | undefined)?.stringValue ?? "";
    expect(joined(await decisionOf(idOf(headersOnly)))).toEqual({ trace: T1, parent: S1 });
    expect(joined(await decisionOf(idOf(both)))).toEqual({ trace: T2, parent: S2 });
    expect((await decisionOf(idOf(both))).span.attributes["portier.adapter"]).toBe("envoy_grpc");
  });

  it("forward-auth: W3C only, and a traceparent sent twice is not used", async () => {
    const w3c = await viaHttp("/forward-auth/nginx", nginx({ traceparent: `00-${T2}-${S2}-01`, tracestate: "n=1" }));
    const b3 = await viaHttp("/forward-auth/nginx", nginx({ b3: `${T1}-${S1}-1` }));
    const twice = await viaHttp(
      "/forward-auth/nginx",
      nginx({ traceparent: [`00-${T2}-${S2}-01`, `00-${T1}-${S1}-01`] }),
    );
    const d = await decisionOf(w3c);
    expect(joined(d)).toEqual({ trace: T2, parent: S2 });
    expect(d.span.spanContext().traceState?.get("n")).toBe("1");
    for (const id of [b3, twice]) {
      const j = joined(await decisionOf(id));
      expect(j.parent).toBeUndefined();
      expect([T1, T2]).not.toContain(j.trace);
    }
  });

  it("/decide: the caller's traceparent", async () => {
    const res = await fetch(`${svc.url}/decide`, {
      method: "POST",
      headers: { "content-type": "application/json", traceparent: `00-${T2}-${S1}-01` },
      body: JSON.stringify({ method: "GET", path: ALLOWED, token }),
    });
    const body = (await res.json()) as { decision_id: string };
    expect(joined(await decisionOf(body.decision_id))).toEqual({ trace: T2, parent: S1 });
  });
});
