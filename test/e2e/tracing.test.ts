/**
 * End to end, traces found in a real collector: Jaeger all-in-one (the pinned build, tools/ensure-jaeger.sh)
 * receives OTLP from `portier serve` (OTEL_EXPORTER_OTLP_ENDPOINT, nothing else set), and requests go through
 * real nginx with the shipped docs/gateways/nginx.conf, each with a W3C traceparent of its own. Through Jaeger's
 * query API: the decision's span, parented on the sent span id, with its attributes and its two child steps;
 * the decision log line carries the same trace_id/span_id; a request flagged not sampled exports nothing.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findBinary, startGateway, type RunningGateway } from "./harness/gateways.js";
import { bearer, send } from "./harness/http.js";
import {
  jaegerMissing,
  startJaeger,
  tagsOf,
  traceProcesses,
  traceSpans,
  type JaegerSpan,
  type RunningJaeger,
} from "./harness/jaeger.js";
import { startIssuerProcess, startServiceProcess, type RunningPortier } from "./harness/portier.js";
import { onDecisionLine } from "./harness/process.js";
import { machineToken } from "./harness/tokens.js";
import { startUpstream, type RunningUpstream } from "./harness/upstream.js";
import { until } from "../service/helpers.js";

const PACKAGE_VERSION = (JSON.parse(readFileSync("package.json", "utf8")) as { version: string }).version;
const skip = jaegerMissing() || findBinary("nginx") === undefined;

describe.skipIf(skip)("traces through nginx, found in Jaeger", () => {
  let jaeger: RunningJaeger | undefined;
  let issuer: RunningPortier | undefined;
  let service: RunningPortier | undefined;
  let upstream: RunningUpstream | undefined;
  let gateway: RunningGateway | undefined;
  let token: string;
  const lines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    jaeger = await startJaeger();
    upstream = await startUpstream();
    issuer = await startIssuerProcess();
    service = await startServiceProcess(issuer.url, [], {
      OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint,
      OTEL_SERVICE_NAME: "portier-e2e",
      // The resource: attributes of the deployment, percent-encoded values; service.name is OTEL_SERVICE_NAME's.
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=e2e,team=platform%20ops,service.name=ignored",
      // Batches leave at once, so the test does not wait the default 5 s per batch.
      OTEL_BSP_SCHEDULE_DELAY: "100",
    });
    onDecisionLine(service.proc, (rec) => lines.push(rec));
    gateway = await startGateway("nginx", { authPort: service.port, upstreamPort: upstream.port });
    token = await machineToken(issuer.url);
  }, 180_000);

  afterAll(async () => {
    await gateway?.stop();
    await service?.stop();
    await issuer?.stop();
    await upstream?.close();
    await jaeger?.stop();
  });

  const ids = () => ({ trace: randomBytes(16).toString("hex"), span: randomBytes(8).toString("hex") });

  async function spansOf(traceId: string, count: number): Promise<JaegerSpan[]> {
    let spans: JaegerSpan[] = [];
    await until(async () => (spans = await traceSpans(jaeger!, traceId)).length >= count, 20_000, 200);
    return spans;
  }

  async function lineFor(path: string): Promise<Record<string, unknown>> {
    let found: Record<string, unknown> | undefined;
    await until(() => (found = lines.find((l) => l.path === path)) !== undefined, 10_000, 50);
    return found!;
  }

  it("finds the decision span, parented on the sent span, with its attributes and steps", async () => {
    const sent = ids();
    const path = "/v2/ORG001/elevesJeunes/traceAllow/absences";
    const res = await send(gateway!.url, path, {
      headers: { ...bearer(token), traceparent: `00-${sent.trace}-${sent.span}-01` },
    });
    expect(res.status).toBe(200);
    const line = await lineFor(path);
    const spans = await spansOf(sent.trace, 3);
    const decision = spans.find((s) => s.operationName === "portier.decide")!;
    expect(decision.references).toEqual([{ refType: "CHILD_OF", traceID: sent.trace, spanID: sent.span }]);
    expect(tagsOf(decision)).toMatchObject({
      "span.kind": "server",
      "portier.decision_id": line.decision_id,
      "portier.allow": true,
      "portier.reason": "allowed",
      "portier.route": "/v2/{codeOrganisme}/elevesJeunes/{idEleveJeune}/absences",
      "portier.flow": "application",
      "portier.adapter": "forward-auth/nginx",
      "portier.bundle.revision": expect.any(String) as unknown,
    });
    const steps = spans.filter((s) => s !== decision);
    expect(steps.map((s) => s.operationName).sort()).toEqual(["portier.evaluate", "portier.verify_token"]);
    for (const s of steps) expect(s.references[0]?.spanID).toBe(decision.spanID);
    // No header value, no token, no path in any span.
    const text = JSON.stringify(spans);
    expect(text).not.toContain(token);
    expect(text).not.toContain("traceAllow");

    expect(line).toMatchObject({ trace_id: sent.trace, span_id: decision.spanID });

    // The resource: OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, the running version and this process's id.
    const resource = (await traceProcesses(jaeger!, sent.trace))[decision.processID]!;
    expect(resource.serviceName).toBe("portier-e2e");
    expect(resource.tags).toMatchObject({
      "deployment.environment.name": "e2e",
      team: "platform ops",
      "service.version": PACKAGE_VERSION,
    });
    expect(resource.tags["service.instance.id"]).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
    );
  });

  it("records a deny with its reason, and the line carries the same ids", async () => {
    const sent = ids();
    const path = "/v2/ORG001/nowhere/trace-deny";
    const res = await send(gateway!.url, path, {
      headers: { ...bearer(token), traceparent: `00-${sent.trace}-${sent.span}-01` },
    });
    expect(res.status).toBe(403);
    const decision = (await spansOf(sent.trace, 1)).find((s) => s.operationName === "portier.decide")!;
    expect(tagsOf(decision)).toMatchObject({ "portier.allow": false, "portier.reason": "route_unknown" });
    expect(await lineFor(path)).toMatchObject({ trace_id: sent.trace, span_id: decision.spanID });
  });

  it("exports nothing for a request the gateway flagged not sampled, yet logs its ids", async () => {
    const unsampled = ids();
    const path = "/v2/ORG001/elevesJeunes/traceUnsampled/absences";
    await send(gateway!.url, path, {
      headers: { ...bearer(token), traceparent: `00-${unsampled.trace}-${unsampled.span}-00` },
    });
    const line = await lineFor(path);
    expect(line.trace_id).toBe(unsampled.trace);
    expect(line.span_id).toMatch(/^[0-9a-f]{16}$/);
    // A sampled request sent after it is found: the unsampled one's batch, had there been a span, left before.
    const after = ids();
    await send(gateway!.url, "/v2/ORG001/elevesJeunes/traceAfter/absences", {
      headers: { ...bearer(token), traceparent: `00-${after.trace}-${after.span}-01` },
    });
    await spansOf(after.trace, 3);
    expect(await traceSpans(jaeger!, unsampled.trace)).toEqual([]);
  });
});
