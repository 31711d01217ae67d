/**
 * The gRPC port under `portier serve --workers 2` (the real process): the cluster primary owns it, as it owns
 * the decision port, and hands each accepted connection to a worker (grpc-js's connection injector there).
 * New connections are answered by both workers, never by the primary; Checks sent on connections accepted just
 * before SIGTERM are all answered (with --shutdown-delay), and the service exits 0.
 */
import { afterEach, describe, expect, it } from "vitest";
import * as grpc from "@grpc/grpc-js";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import {
  TEACHER,
  makeKeys,
  runServe,
  sampleServeArgs,
  startServe,
  until,
  userToken,
  type ServiceProcess,
} from "../helpers.js";
import { envoyCheck, grpcClients, type GrpcClients } from "./client.js";

const ALLOWED = "/v2/ORG001/elevesJeunes";
const running: ServiceProcess[] = [];
afterEach(async () => {
  for (const svc of running.splice(0)) await svc.stop();
});

/** The primary's "listening" line: where the gRPC port is. */
function grpcAddressOf(svc: ServiceProcess): string {
  const line = svc
    .output()
    .split("\n")
    .find((l) => l.includes('"msg":"listening"'));
  const address = line && (JSON.parse(line) as { grpcAddress?: string }).grpcAddress;
  if (!address) throw new Error(`no grpcAddress in the listening line:\n${svc.output()}`);
  return address;
}

/** A client on a connection of its own (no subchannel shared with another client of this process). */
const ownConnection = (address: string): GrpcClients => grpcClients(address, { "grpc.use_local_subchannel_pool": 1 });

async function serveTwoWorkers(extra: string[] = []) {
  const keys = await makeKeys();
  const svc = await startServe([...sampleServeArgs(keys), "--grpc-port", "0", "--workers", "2", ...extra]);
  running.push(svc);
  return { svc, address: grpcAddressOf(svc), token: await userToken(keys, TEACHER) };
}

describe("--workers 2 --grpc-port", () => {
  it("each new connection is served by a worker, in turn: both answer, the primary never does", async () => {
    const { svc, address, token } = await serveTwoWorkers();
    const pids = new Set<number>();
    for (let i = 0; i < 6; i++) {
      const client = ownConnection(address);
      try {
        const res = await client.check(envoyCheck("GET", ALLOWED, { authorization: `Bearer ${token}` }));
        const id = (res.dynamic_metadata.fields.decision_id as { stringValue: string }).stringValue;
        await until(() => svc.output().includes(id));
        const line = svc
          .output()
          .split("\n")
          .find((l) => l.includes(id))!;
        pids.add((JSON.parse(line) as { pid: number }).pid);
      } finally {
        client.close();
      }
    }
    expect(pids.size).toBe(2);
    expect(pids.has(svc.proc.pid!)).toBe(false);
  }, 60_000);

  // With a --shutdown-delay, as a deployment behind Envoy has (health NOT_SERVING first): without one, a call
  // still on its way when a worker's grpc-js sends its GOAWAY is refused, and the client's retry finds the port
  // closed (UNAVAILABLE), with or without the hand-off.
  it("Checks sent on connections accepted just before SIGTERM are all answered; the service exits 0", async () => {
    const { svc, address, token } = await serveTwoWorkers(["--shutdown-timeout", "10", "--shutdown-delay", "1"]);
    const clients = Array.from({ length: 40 }, () => ownConnection(address));
    try {
      // Every connection established (and so accepted and handed over, or about to be) before the signal.
      await Promise.all(
        clients.map(
          (c) =>
            new Promise<void>((resolve, reject) =>
              c.authorization.waitForReady(Date.now() + 10_000, (err) => (err ? reject(err) : resolve())),
            ),
        ),
      );
      const exited = new Promise<number | null>((resolve) => svc.proc.once("exit", (code) => resolve(code)));
      const answers = clients.map((c) =>
        c.check(envoyCheck("GET", ALLOWED, { authorization: `Bearer ${token}` })).then(
          (res) => res.status?.code ?? 0,
          (err: grpc.ServiceError) => `${grpc.status[err.code]}: ${err.details}`,
        ),
      );
      svc.proc.kill("SIGTERM");
      expect(await Promise.all(answers)).toEqual(clients.map(() => 0));
      expect(await exited).toBe(0);
    } finally {
      for (const c of clients) c.close();
    }
  }, 60_000);

  it("a gRPC port in use is one line from the primary and exit 2", async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
    const port = (busy.address() as AddressInfo).port;
    try {
      const args = sampleServeArgs(await makeKeys());
      const r = await runServe([...args, "--port", "0", "--grpc-port", String(port), "--workers", "2"]);
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split("\n")).toEqual([
        expect.stringMatching(
          new RegExp(`^portier serve: cannot listen on 127\\.0\\.0\\.1:${port} for gRPC: .*choose another --grpc-port`),
        ),
      ]);
    } finally {
      busy.close();
    }
  }, 60_000);
});
