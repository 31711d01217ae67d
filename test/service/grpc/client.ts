/**
 * Test support: a @grpc/grpc-js client of Portier's gRPC port (the same vendored protos), with promise
 * helpers for Authorization/Check and Health/Check, and the CheckRequest Envoy's ext_authz filter sends.
 */
import * as grpc from "@grpc/grpc-js";
import { loadServices } from "../../../src/service/grpc/server.js";
import type { CheckResponseMessage } from "../../../src/service/grpc/check.js";

export interface GrpcClients {
  check(request: unknown, deadlineMs?: number, metadata?: grpc.Metadata): Promise<CheckResponseMessage>;
  health(service?: string): Promise<{ status: string }>;
  authorization: grpc.Client;
  healthClient: grpc.Client;
  close(): void;
}

export function grpcClients(address: string, options: grpc.ClientOptions = {}): GrpcClients {
  const services = loadServices();
  const Authorization = grpc.makeClientConstructor(services.authorization, "Authorization");
  const Health = grpc.makeClientConstructor(services.health, "Health");
  const authorization = new Authorization(address, grpc.credentials.createInsecure(), options);
  const healthClient = new Health(address, grpc.credentials.createInsecure(), options);
  const call = <T>(
    client: grpc.Client,
    method: grpc.MethodDefinition<unknown, unknown>,
    req: unknown,
    deadlineMs = 10_000,
    metadata = new grpc.Metadata(),
  ): Promise<T> =>
    new Promise((resolve, reject) => {
      client.makeUnaryRequest(
        method.path,
        method.requestSerialize,
        method.responseDeserialize,
        req,
        metadata,
        { deadline: Date.now() + deadlineMs },
        (err, res) => (err ? reject(err) : resolve(res as T)),
      );
    });
  return {
    check: (req, deadlineMs, metadata) =>
      call<CheckResponseMessage>(authorization, services.authorization.Check!, req, deadlineMs, metadata),
    health: (service = "") => call<{ status: string }>(healthClient, services.health.Check!, { service }),
    authorization,
    healthClient,
    close() {
      authorization.close();
      healthClient.close();
    },
  };
}

/**
 * The CheckRequest Envoy sends for `method path` with these (lower-cased) headers, as its ext_authz filter fills it.
 */
export function envoyCheck(method: string, path: string, headers: Record<string, string> = {}): unknown {
  return {
    attributes: {
      source: { address: { socket_address: { address: "10.0.0.7", port_value: 51234 } } },
      destination: { address: { socket_address: { address: "10.0.0.1", port_value: 8080 } } },
      request: {
        time: { seconds: String(Math.floor(Date.now() / 1000)), nanos: 0 },
        http: {
          id: "1234567890",
          method,
          headers: {
            ":authority": "api.example",
            ":method": method,
            ":path": path,
            ":scheme": "http",
            "x-forwarded-proto": "http",
            "x-request-id": "0f6c6e2e-5b1a-4a35-9a0e-2f7a6c1b9d11",
            ...headers,
          },
          path,
          host: "api.example",
          scheme: "http",
          protocol: "HTTP/1.1",
        },
      },
    },
  };
}

/** A response's header options as a plain name -> value object. */
export function headersOf(
  options: { header?: { key?: string; value?: string } }[] | undefined,
): Record<string, string> {
  return Object.fromEntries((options ?? []).map((o) => [o.header?.key ?? "", o.header?.value ?? ""]));
}
