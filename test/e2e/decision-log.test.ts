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
