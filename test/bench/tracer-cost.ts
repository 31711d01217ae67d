/**
 * What the decision tracer itself costs a decision, in this process (no HTTP, no policy): the CPU microseconds of
 * one decision's tracing as decide.ts drives it (start from a W3C traceparent, the two steps, the end with the
 * decision's facts), unsampled (flag 00) and sampled (flag 01). Sampled twice: with an exporter that discards the
 * batches (making and ending the three spans), and with the OTLP exporter to `otlpUrl` (the protobuf encoding and
 * the upload too; the collector, when it runs in this process, is counted with them). Interleaved rounds, medians.
 * The service figures (test/bench/tracing.ts) are higher: there the spans share the caches and the heap with the
 * rest of a request.
 */
import { ExportResultCode } from "@opentelemetry/core";
import type { SpanExporter } from "@opentelemetry/sdk-trace";
import { pino } from "pino";
import { startDecisionTracer, type DecisionTracer } from "../../src/service/tracing/decision-tracer.js";
import { median } from "./measure.js";

const FACTS = {
  decisionId: "6f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f",
  allow: true,
  reason: "allowed",
  route: "/v2/{codeOrganisme}/elevesJeunes/{idEleveJeune}/absences",
  flow: "application",
  revision: "b66813d34581",
  failed: false,
};

/** Exports nothing: each batch is acknowledged as exported. */
const DISCARD: SpanExporter = {
  export: (_spans, done) => setImmediate(() => done({ code: ExportResultCode.SUCCESS })),
  shutdown: () => Promise.resolve(),
};

/** 100 gateways' spans, as the HTTP benchmark sends them, flagged `flags`. */
function headersOf(flags: "00" | "01"): Map<string, string[]>[] {
  return Array.from({ length: 100 }, (_, i) => {
    const id = (i + 1).toString(16);
    return new Map([["traceparent", [`00-${id.padStart(32, "a")}-${id.padStart(16, "b")}-${flags}`]]]);
  });
}

function decision(tracer: DecisionTracer, headers: Map<string, string[]>): void {
  const d = tracer.start("forward-auth/nginx", headers);
  d.step("portier.verify_token")?.end();
  d.step("portier.evaluate")?.end();
  if (d.trace.sampled) d.end(FACTS);
  else d.end();
}

/** CPU microseconds per decision over `ms` of wall time, yielding to the event loop (the exports) every 200. */
async function cpuPerDecision(tracer: DecisionTracer, headers: Map<string, string[]>[], ms: number): Promise<number> {
  const c0 = process.cpuUsage();
  const end = Date.now() + ms;
  let n = 0;
  while (Date.now() < end) {
    for (let i = 0; i < 200; i++) decision(tracer, headers[n++ % headers.length]!);
    await new Promise((resolve) => setImmediate(resolve));
  }
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / n;
}

export async function tracerCost(otlpUrl: string, rounds = 9, ms = 400): Promise<void> {
  const logger = pino({ level: "warn" }, pino.destination("/dev/null"));
  const settings = {
    url: otlpUrl,
    serviceName: "portier-bench",
    sampler: "parentbased_always_on" as const,
    ratio: 1,
    resourceAttributes: {},
    batch: {},
  };
  const [discarding, exporting] = [
    await startDecisionTracer(settings, logger, DISCARD),
    await startDecisionTracer(settings, logger),
  ];
  const sides: [string, DecisionTracer, Map<string, string[]>[]][] = [
    ["unsampled", discarding, headersOf("00")],
    ["sampled, spans made and ended", discarding, headersOf("01")],
    ["sampled, and exported over OTLP", exporting, headersOf("01")],
  ];
  const samples = sides.map(() => [] as number[]);
  for (let round = 0; round <= rounds; round++)
    for (const [i, [, tracer, headers]] of sides.entries()) {
      const us = await cpuPerDecision(tracer, headers, ms);
      if (round > 0) samples[i]!.push(us); // round 0 warms the JIT up
    }
  console.log(`The decision tracer alone, in process (${rounds} interleaved rounds of ${ms} ms, medians):`);
  for (const [i, [name]] of sides.entries())
    console.log(`  ${name.padEnd(36)} ${median(samples[i]!).toFixed(2).padStart(6)} µs CPU per decision`);
  await Promise.all([discarding.shutdown(2000), exporting.shutdown(2000)]);
}
