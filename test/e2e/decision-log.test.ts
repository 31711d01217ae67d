/**
 * End to end, through real nginx and caddy with the shipped configs: the decision log line ties a decision to
 * the gateway's request. It carries the gateway's request id (not one the client sent), the client address as
 * the gateway saw it (not a client-sent X-Forwarded-For), the decision's message, and the path also when the
 * token fails; an unparsable path is kept as received, bounded.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findBinary, startGateway, type GatewayKind, type RunningGateway } from "./harness/gateways.js";
import { bearer, send } from "./harness/http.js";
import { startIssuerProcess, startServiceProcess, type RunningPortier } from "./harness/portier.js";
import { onDecisionLine } from "./harness/process.js";
import { machineToken } from "./harness/tokens.js";
import { startUpstream, type RunningUpstream } from "./harness/upstream.js";
import { until } from "../service/helpers.js";
import { startCollector, type Collector } from "../support/collector.js";
import { makeKey, sign } from "../support/tokens.js";

let issuer: RunningPortier | undefined;
let service: RunningPortier | undefined;
let upstream: RunningUpstream;
let token: string;
const lines: Record<string, unknown>[] = [];

/** The decision line whose path or raw_path is `path` (each case uses a path of its own). */
async function decisionFor(path: string): Promise<Record<string, unknown>> {
  let found: Record<string, unknown> | undefined;
  await until(() => (found = lines.find((l) => l.path === path || l.raw_path === path)) !== undefined, 10_000, 50);
  return found!;
}

const FORGED = { "x-request-id": "client-made-id", "x-forwarded-for": "6.6.6.6", "x-real-ip": "6.6.6.6" };
const REQUEST_ID: Record<GatewayKind, RegExp> = {
  nginx: /^[0-9a-f]{32}$/,
  caddy: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
};

beforeAll(async () => {
  upstream = await startUpstream();
  issuer = await startIssuerProcess();
  service = await startServiceProcess(issuer.url);
  onDecisionLine(service.proc, (rec) => lines.push(rec));
  token = await machineToken(issuer.url);
}, 120_000);

afterAll(async () => {
  await service?.stop();
  await issuer?.stop();
  await upstream?.close();
});

for (const kind of ["nginx", "caddy"] as GatewayKind[]) {
  describe.skipIf(findBinary(kind) === undefined)(`decision log lines through ${kind}`, () => {
    let gateway: RunningGateway;
    beforeAll(async () => {
      gateway = await startGateway(kind, { authPort: service!.port, upstreamPort: upstream.port });
    });
    afterAll(async () => {
      await gateway?.stop();
    });

    it("carry the gateway's request id and client address, never the client's, and the message", async () => {
      const path = `/v2/ORG001/centres/log-${kind}`;
      await send(gateway.url, "/v1/roles?case=" + kind, { headers: { ...bearer(token), ...FORGED } });
      const res = await send(gateway.url, path, { headers: { ...bearer(token), ...FORGED } });
      expect(res.status).toBe(403);
      const line = await decisionFor(path);
      expect(line.request_id).toMatch(REQUEST_ID[kind]);
      expect(line.client_address).toBe("127.0.0.1");
      expect(line).toMatchObject({
        reason: "route_unknown",
        message: expect.stringContaining("no route of the catalog matches") as unknown,
      });
    });

    it("name the path when the token fails", async () => {
      const path = `/v2/ORG001/centres-${kind}`;
      const res = await send(gateway.url, path, { headers: { authorization: "Bearer not-a-token" } });
      expect(res.status).toBe(401);
      const line = await decisionFor(path);
      expect(line).toMatchObject({ reason: "token_malformed", path, input: null });
      expect(JSON.stringify(line)).not.toContain("not-a-token");
    });
  });
}

describe("decision log lines from /decide", () => {
  it("keep an invalid path as received (bounded) and a well-formed traceparent", async () => {
    const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const bad = `/v1/%2e%2e/${"x".repeat(1000)}`;
    await fetch(`${service!.url}/decide`, {
      method: "POST",
      headers: { "content-type": "application/json", traceparent, "x-request-id": "sidecar-1" },
      body: JSON.stringify({ method: "GET", path: bad, token }),
    });
    const line = await decisionFor(bad.slice(0, 512));
    expect(line).toMatchObject({
      reason: "path_invalid",
      path: null,
      traceparent,
      request_id: "sidecar-1",
      client_address: null,
    });
    expect(line.raw_path).toHaveLength(512);
  });
});

/**
 * Issue 37 item 1: every answer is on the record at the collector, through nginx with its shipped config. A
 * token signed by a key the issuer never published (kid_unknown) and a forged X-Original-URI each reach the
 * collector as an event naming the adapter, method and path the gateway received; a request refused before any
 * decision (a gateway passing both families' headers; a /decide body that is not JSON) reaches it under the
 * decision id of its answer, and is counted in portier_requests_rejected_total.
 */
describe.skipIf(findBinary("nginx") === undefined)("events at the collector, through nginx", () => {
  let collector: Collector;
  let shipping: RunningPortier | undefined;
  let gateway: RunningGateway;
  beforeAll(async () => {
    collector = await startCollector();
    shipping = await startServiceProcess(issuer!.url, [
      "--decision-log-url",
      collector.url,
      "--decision-log-period-seconds",
      "0.1",
    ]);
    gateway = await startGateway("nginx", { authPort: shipping.port, upstreamPort: upstream.port });
  }, 120_000);
  afterAll(async () => {
    await gateway?.stop();
    await shipping?.stop();
    await collector?.close();
  });

  type Shipped = { decision_id: string; result: Record<string, unknown>; request_context: Record<string, unknown> };
  async function eventWhere(match: (e: Shipped) => boolean): Promise<Shipped> {
    let found: Shipped | undefined;
    await until(() => (found = (collector.events as Shipped[]).find(match)) !== undefined, 10_000, 50);
    return found!;
  }
  const pathOf = (e: Shipped) => (e.request_context.http as { path: string }).path;

  it("a token signed by an unknown key: the event names the adapter, method and path", async () => {
    const stranger = await makeKey("never-published");
    const now = Math.floor(Date.now() / 1000);
    const forged = await sign({ iss: issuer!.url, sub: "x", client_id: "x", iat: now, exp: now + 300 }, stranger);
    const path = "/v2/ORG001/centres/unknown-key";
    const res = await send(gateway.url, path, { method: "DELETE", headers: bearer(forged) });
    expect(res.status).toBe(401);
    const event = await eventWhere((e) => pathOf(e) === path);
    expect(event.result).toMatchObject({ allow: false, reason: "kid_unknown" });
    expect(event.request_context).toMatchObject({ adapter: "forward-auth/nginx", http: { method: "DELETE", path } });
    expect(JSON.stringify(event)).not.toContain(forged);
  });

  it("a forged X-Original-Method: the event names the method nginx received, not the forged one", async () => {
    const path = "/v2/ORG001/centres";
    const res = await send(gateway.url, path, {
      method: "DELETE",
      headers: { ...bearer(token), "X-Original-Method": "GET" },
    });
    expect(res.status).toBe(403);
    const event = await eventWhere((e) => pathOf(e) === path);
    expect(event.result).toMatchObject({ allow: false, reason: "method_not_allowed" });
    expect(event.request_context).toMatchObject({ adapter: "forward-auth/nginx", http: { method: "DELETE", path } });
  });

  it("requests refused before any decision: an event under the answer's decision id, and a count", async () => {
    // What a gateway that passes a client's X-Forwarded-Uri on beside its own X-Original-* headers sends.
    const refused = await send(`http://127.0.0.1:${shipping!.port}`, "/forward-auth/nginx", {
      headers: {
        ...bearer(token),
        "X-Original-Method": "GET",
        "X-Original-URI": "/v2/ORG001/refused",
        "X-Forwarded-Uri": "/v2/ORG001/centres",
        "X-Real-IP": "10.9.8.7",
      },
    });
    expect(refused.status).toBe(403);
    const refusedId = refused.headers["x-portier-decision-id"];
    expect(refusedId).toMatch(/^[0-9a-f-]{36}$/);
    const notJson = await fetch(`http://127.0.0.1:${shipping!.port}/decide`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{not json",
    });
    expect(notJson.status).toBe(400);
    const notJsonId = ((await notJson.json()) as { decision_id: string }).decision_id;
    const a = await eventWhere((e) => e.decision_id === refusedId);
    expect(a.result).toMatchObject({ allow: false, status: 403, reason: "request_invalid" });
    expect(a.result.message).toContain("X-Forwarded-Uri");
    expect(a).toMatchObject({ requested_by: "10.9.8.7" });
    expect(a.request_context).toMatchObject({
      adapter: "forward-auth/nginx",
      http: { method: "GET", path: "/v2/ORG001/refused" },
    });
    const b = await eventWhere((e) => e.decision_id === notJsonId);
    expect(b.result).toMatchObject({ allow: false, status: 400, reason: "invalid_json" });
    expect(b.request_context).toMatchObject({ adapter: "decide", http: { method: "POST", path: "/decide" } });
    const metrics = await (await fetch(`http://127.0.0.1:${shipping!.port}/metrics`)).text();
    expect(metrics).toContain(
      'portier_requests_rejected_total{adapter="forward-auth/nginx",reason="request_invalid"} 1',
    );
    expect(metrics).toContain('portier_requests_rejected_total{adapter="decide",reason="invalid_json"} 1');
  });
});
