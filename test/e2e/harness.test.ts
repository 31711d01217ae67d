/**
 * Self-test of the end-to-end harness: real nginx and caddy in front of the echo upstream, with the
 * harness's fake forward-auth server (not Portier) as the auth endpoint. Checks the gateway configs
 * themselves: what the auth endpoint receives, status and header pass-through, forged X-Portier-*
 * headers dropped, and that any auth status other than 200/401/403 becomes a gateway error.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAKE_HEADERS, startFakeForwardAuth, type FakeForwardAuth } from "./harness/fake-forward-auth.js";
import { INSTALL_HINT, findBinary, startGateway, type GatewayKind, type RunningGateway } from "./harness/gateways.js";
import { bearer, send } from "./harness/http.js";
import { freePort, waitForPort } from "./harness/net.js";
import { startUpstream, UPSTREAM_MARK, type RunningUpstream } from "./harness/upstream.js";

const KINDS: GatewayKind[] = ["nginx", "caddy"];

for (const kind of KINDS) {
  const missing = findBinary(kind) === undefined;
  if (missing)
    console.warn(`[e2e] ${kind} not found: skipping the ${kind} harness self-test. Install: ${INSTALL_HINT[kind]}`);

  describe.skipIf(missing)(`harness self-test: ${kind} with a fake forward-auth`, () => {
    let auth: FakeForwardAuth;
    let upstream: RunningUpstream;
    let gateway: RunningGateway;

    beforeAll(async () => {
      auth = await startFakeForwardAuth();
      upstream = await startUpstream();
      gateway = await startGateway(kind, { authPort: auth.port, upstreamPort: upstream.port });
    });
    afterAll(async () => {
      await gateway?.stop();
      await upstream?.close();
      await auth?.close();
    });

    function reset() {
      auth.seen.length = 0;
      upstream.seen.length = 0;
    }

    it("listens on loopback and allows: upstream reached with the auth headers copied", async () => {
      reset();
      const path = "/v2/ORG001/elevesJeunes?x=1";
      const res = await send(gateway.url, path, { headers: bearer("allow") });
      expect(res.status, gateway.logs()).toBe(200);
      expect(JSON.parse(res.body)).toMatchObject({
        upstream: UPSTREAM_MARK,
        method: "GET",
        path,
        portier: FAKE_HEADERS,
      });
      expect(auth.seen).toHaveLength(1);
      expect(auth.seen[0]).toMatchObject({ originalMethod: "GET", originalUri: path, authorization: "Bearer allow" });
      // Caddy keeps the original query string on the auth request; nginx sends the bare URI.
      expect(auth.seen[0]?.path.split("?")[0]).toBe(`/forward-auth/${kind}`);
    });

    it("passes the raw path and the original method to the auth endpoint", async () => {
      reset();
      const path = "/v2/ORG001/e%CC%81coles";
      const res = await send(gateway.url, path, { method: "POST", headers: bearer("allow") });
      expect(res.status).toBe(200);
      expect(auth.seen[0]).toMatchObject({ originalMethod: "POST", originalUri: path });
      expect(upstream.seen[0]).toMatchObject({ method: "POST", path });
    });

    it("401 with WWW-Authenticate from the auth endpoint, upstream not reached", async () => {
      reset();
      const res = await send(gateway.url, "/v2/ORG001/elevesJeunes");
      expect(res.status).toBe(401);
      expect(res.headers["www-authenticate"]).toBe('Bearer realm="portier", error="invalid_token"');
      expect(upstream.seen).toHaveLength(0);
    });

    it("403 from the auth endpoint, upstream not reached", async () => {
      reset();
      const res = await send(gateway.url, "/v2/ORG001/elevesJeunes", { headers: bearer("deny") });
      expect(res.status).toBe(403);
      expect(upstream.seen).toHaveLength(0);
    });

    it("any other auth status is a gateway error (500), never a pass", async () => {
      reset();
      const res = await send(gateway.url, "/v2/ORG001/elevesJeunes", { headers: bearer("boom") });
      expect(res.status).toBe(500);
      expect(upstream.seen).toHaveLength(0);
    });

    it("drops X-Portier-* headers sent by the client when the auth answer has none", async () => {
      reset();
      const forged = {
        "x-portier-subject": "forged",
        "x-portier-tenant": "forged",
        "x-portier-roles": "directeur_jeune",
        "x-portier-decision-id": "forged",
      };
      const res = await send(gateway.url, "/v2/ORG001", { headers: { ...bearer("allow-bare"), ...forged } });
      expect(res.status).toBe(200);
      const received = upstream.seen[0]?.portier ?? {};
      for (const [name, value] of Object.entries(forged)) expect(received[name], name).not.toBe(value);
      if (kind === "nginx") expect(received).toEqual({});
      // Caddy 2.6.2 sets a header the auth answer lacks to its placeholder's literal text, which is
      // why Portier must send all four X-Portier-* headers on every 200.
      else
        for (const value of Object.values(received))
          expect(value).toMatch(/^\{http\.reverse_proxy\.header\.X-Portier-/);
    });

    it("fails closed when the auth endpoint is down: a gateway error, upstream not reached", async () => {
      reset();
      const down = await startGateway(kind, { authPort: await freePort(), upstreamPort: upstream.port });
      try {
        const res = await send(down.url, "/v2/ORG001/centres", { headers: bearer("allow") });
        expect([500, 502, 503]).toContain(res.status);
        expect(upstream.seen).toHaveLength(0);
      } finally {
        await down.stop();
      }
    });

    it("stop() ends the gateway: its port no longer accepts connections", async () => {
      const other = await startGateway(kind, { authPort: auth.port, upstreamPort: upstream.port });
      await other.stop();
      await expect(waitForPort(other.port, { timeoutMs: 200, what: `${kind} after stop` })).rejects.toThrow(
        /nothing accepted/,
      );
    });

    it("replaces X-Portier-* headers sent by the client with the auth answer's", async () => {
      reset();
      const res = await send(gateway.url, "/v2/ORG001", {
        headers: { ...bearer("allow"), "x-portier-roles": "directeur_jeune" },
      });
      expect(res.status).toBe(200);
      expect(upstream.seen[0]?.portier).toEqual(FAKE_HEADERS);
    });
  });
}
