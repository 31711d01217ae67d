/**
 * Stopping the gRPC port (src/service/grpc/server.ts close): a call in flight is answered before the port
 * closes; one still unanswered after the grace period is cut, and close returns then. A decide that answers when the
 * test says stands in for a slow decision.
 */
import { describe, expect, it } from "vitest";
import { pino } from "pino";
import * as grpc from "@grpc/grpc-js";
import { startGrpc } from "../../../src/service/grpc/server.js";
import type { Decide, DecisionAnswer } from "../../../src/service/decide/decide.js";
import { envoyCheck, grpcClients } from "./client.js";
import { until } from "../../support/until.js";

const ALLOW: DecisionAnswer = {
  allow: true,
  status: 200,
  reason: "allowed",
  message: "allowed",
  flow: "application",
  route: null,
  deprecated: false,
  mode: "enforce",
  would_deny: null,
  decision_id: "d-1",
  subject: { client_id: "machine", roles: [] },
  failed: false,
};

/** A decide whose answers wait until release() is called. */
function heldDecide(): { decide: Decide; release(): void; waiting(): number } {
  const held: (() => void)[] = [];
  return {
    decide: () => new Promise<DecisionAnswer>((resolve) => held.push(() => resolve(ALLOW))),
    release: () => held.splice(0).forEach((f) => f()),
    waiting: () => held.length,
  };
}

describe("gRPC port: stopping", () => {
  it("answers a call in flight before closing", async () => {
    const d = heldDecide();
    const svc = await startGrpc(
      d.decide,
      () => true,
      { host: "127.0.0.1", port: 0, maxMessageBytes: 65536 },
      pino({ level: "silent" }),
    );
    const client = grpcClients(svc.address);
    try {
      await expect(client.health()).resolves.toEqual({ status: "SERVING" });
      const call = client.check(envoyCheck("GET", "/v2/ORG001/elevesJeunes"));
      await until(() => d.waiting() === 1);
      let closed = false;
      const closing = svc.close(10_000).then(() => (closed = true));
      await new Promise((r) => setTimeout(r, 100));
      expect(closed).toBe(false);
      d.release();
      await expect(call).resolves.toMatchObject({
        dynamic_metadata: { fields: { reason: { stringValue: "allowed" } } },
      });
      await closing;
    } finally {
      client.close();
    }
  });

  it("cuts a call still unanswered after the grace period, and returns", async () => {
    const d = heldDecide();
    const svc = await startGrpc(
      d.decide,
      () => true,
      { host: "127.0.0.1", port: 0, maxMessageBytes: 65536 },
      pino({ level: "silent" }),
    );
    const client = grpcClients(svc.address);
    try {
      // The outcome is taken at once: the call fails while close() is awaited, before anything else could catch it.
      const outcome = client.check(envoyCheck("GET", "/v2/ORG001/elevesJeunes")).then(
        () => undefined,
        (e: grpc.ServiceError) => e,
      );
      await until(() => d.waiting() === 1);
      const t0 = Date.now();
      await svc.close(300);
      expect(Date.now() - t0).toBeLessThan(5_000);
      const err = await outcome;
      expect(err?.code).toBeGreaterThan(grpc.status.OK);
    } finally {
      d.release();
      client.close();
    }
  });
});
