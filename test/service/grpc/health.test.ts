/**
 * gRPC health follows /ready (the same readiness function): NOT_SERVING while the issuer's keys are not
 * loaded (/ready 503), and Watch streams the status. And a gRPC port that cannot be bound is a start-up
 * failure naming --grpc-port, with nothing left listening.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer, type Server } from "node:net";
import * as grpc from "@grpc/grpc-js";
import {
  ISSUER,
  RECORDS,
  makeKeys,
  serveInProcess,
  tempDir,
  writeDirectory,
  type InProcessService,
  sampleServeArgs,
} from "../helpers.js";
import { grpcClients, type GrpcClients } from "./client.js";
import { loadServices } from "../../../src/service/grpc/server.js";

describe("health while not ready", () => {
  let svc: InProcessService;
  let client: GrpcClients;
  beforeAll(async () => {
    const dir = tempDir();
    // Keys from a URL nothing answers: they never load, /ready stays 503.
    svc = await serveInProcess([
      "--issuer",
      ISSUER,
      "--jwks",
      "http://127.0.0.1:9/jwks.json",
      "--directory",
      writeDirectory(dir, RECORDS),
      "--grpc-port",
      "0",
    ]);
    client = grpcClients(svc.service.grpcAddress!);
  }, 60_000);
  afterAll(async () => {
    client?.close();
    await svc?.stop();
  });

  it("is NOT_SERVING while /ready answers 503", async () => {
    expect((await fetch(`${svc.url}/ready`)).status).toBe(503);
    await expect(client.health("")).resolves.toEqual({ status: "NOT_SERVING" });
    await expect(client.health("envoy.service.auth.v3.Authorization")).resolves.toEqual({ status: "NOT_SERVING" });
  });

  it("Watch sends the current status first", async () => {
    const watch = loadServices().health.Watch!;
    const stream = client.healthClient.makeServerStreamRequest(
      watch.path,
      watch.requestSerialize,
      watch.responseDeserialize,
      { service: "" },
      new grpc.Metadata(),
      {},
    );
    const first = await new Promise((resolve, reject) => {
      stream.once("data", resolve);
      stream.once("error", reject);
    });
    stream.cancel();
    stream.on("error", () => undefined);
    expect(first).toEqual({ status: "NOT_SERVING" });
  });
});

describe("a gRPC port that cannot be bound", () => {
  let blocker: Server;
  let port: number;
  beforeAll(async () => {
    blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    port = (blocker.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => blocker.close(() => resolve())));

  it("fails the start with one line naming --grpc-port", async () => {
    const keys = await makeKeys();
    await expect(serveInProcess([...sampleServeArgs(keys), "--grpc-port", String(port)])).rejects.toThrow(
      new RegExp(`^cannot listen on 127\\.0\\.0\\.1:${port} for gRPC: .*choose another --grpc-port`),
    );
  });
});
