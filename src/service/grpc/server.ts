/**
 * The gRPC port (--grpc-port): Envoy's ext_authz Authorization/Check (check.ts) and grpc.health.v1.Health
 * (health.ts) on one @grpc/grpc-js server, h2c (plaintext HTTP/2: a sidecar or the mesh on the same host or
 * network reaches it; TLS is the mesh's). The protos are vendored in ./protos (see its README for their
 * upstream version) and loaded once when the port is enabled.
 *
 * Limits: a request message above maxMessageBytes is refused by grpc-js (RESOURCE_EXHAUSTED, never decoded);
 * at most MAX_STREAMS calls at once per connection and MAX_SESSION_MEMORY_MB of buffered frames per
 * connection (a client that sends calls and never reads its answers is cut off there); keepalive pings
 * find dead peers. A Check that fails inside Portier is a gRPC INTERNAL error, so Envoy's
 * failure_mode_allow (keep it false) and status_on_error decide, as with OPA-Envoy.
 * With --workers N the cluster primary owns the port, as it owns the HTTP one, and hands each accepted
 * connection to a worker, which serves it through grpc-js's connection injector (grpcForHandoff).
 */
import type { Duplex } from "node:stream";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import type { Logger } from "pino";
import { messageOf } from "../../errors/caught.js";
import type { Decide } from "../decide/decide.js";
import {
  badRequestResponse,
  checkResponse,
  readCheckRequest,
  callTraceContext,
  type CheckRequestMessage,
  type CheckResponseMessage,
} from "./check.js";
import { healthService } from "./health.js";

/** Beside the module: src/ (tsx, vitest) holds them, and tools/build-dist.mjs copies them into dist/. */
const PROTOS = fileURLToPath(new URL("./protos/", import.meta.url));
const MAX_STREAMS = 1000;
const MAX_SESSION_MEMORY_MB = 10;
export const GRPC_ADAPTER = "envoy_grpc";

export interface GrpcOptions {
  host: string;
  port: number;
  maxMessageBytes: number;
}

export interface GrpcService {
  /** host:port as bound (a grpcurl or grpc-js target). */
  address: string;
  /** Health answers NOT_SERVING and new calls are refused; calls in flight finish for up to graceMs, then every
   * connection is closed. */
  close(graceMs: number): Promise<void>;
}

interface Loaded {
  authorization: grpc.ServiceDefinition;
  health: grpc.ServiceDefinition;
}

let loaded: Loaded | undefined;

/** The two service definitions (the protos are parsed once per process). */
export function loadServices(): Loaded {
  if (loaded) return loaded;
  const definitions = loadSync(["envoy/service/auth/v3/external_auth.proto", "grpc/health/v1/health.proto"], {
    includeDirs: [PROTOS],
    keepCase: true,
    longs: String,
    enums: String,
    defaults: false,
    oneofs: true,
  });
  const service = (name: string): grpc.ServiceDefinition => {
    const d = definitions[name];
    if (d === undefined || !("Check" in d)) throw new Error(`${PROTOS}: service ${name} not found in the protos`);
    return d;
  };
  loaded = { authorization: service("envoy.service.auth.v3.Authorization"), health: service("grpc.health.v1.Health") };
  return loaded;
}

/** The Check handler: the same decide as every HTTP adapter (adapter label envoy_grpc). */
export function checkHandler(
  decide: Decide,
  logger: Logger,
): grpc.handleUnaryCall<CheckRequestMessage, CheckResponseMessage> {
  return (call, callback) => {
    const failed = (err: unknown, decisionId?: string): void => {
      logger.error(
        { event: "grpc_check_failed", decision_id: decisionId ?? null, error: messageOf(err) },
        "gRPC check failed",
      );
      callback({
        code: grpc.status.INTERNAL,
        details: `the decision could not be made${decisionId ? ` (decision_id ${decisionId})` : ""}`,
      });
    };
    try {
      const read = readCheckRequest(
        call.request,
        callTraceContext((key) => call.metadata.get(key)),
      );
      if (!read.ok) {
        const http = call.request?.attributes?.request?.http;
        const decisionId = decide.reject?.({
          adapter: GRPC_ADAPTER,
          req: { method: String(http?.method ?? "").slice(0, 32), path: String(http?.path ?? "") },
          status: 400,
          reason: "request_invalid",
          message: read.message,
        });
        logger.warn(
          {
            event: "gateway_request_refused",
            endpoint: "grpc:Check",
            reason: "request_invalid",
            message: read.message,
            decision_id: decisionId ?? null,
          },
          "gateway request refused",
        );
        return callback(null, badRequestResponse(read.message, decisionId));
      }
      decide(read.request, GRPC_ADAPTER)
        .then((a) => {
          // Portier failed to decide (denied internal_error): to Envoy that is a failure, not a decision.
          if (a.failure === "internal") failed(new Error(a.message), a.decision_id);
          else callback(null, checkResponse(a, read.clientPortierHeaders));
        })
        .catch(failed);
    } catch (err) {
      failed(err);
    }
  };
}

/** A gRPC server whose connections a cluster primary accepts and hands over (--workers N), like HTTP's. */
export interface GrpcHandoff {
  /** Serves a connection accepted elsewhere (grpc-js's connection injector). */
  accept(socket: Duplex): void;
  /** As GrpcService.close. */
  close(graceMs: number): Promise<void>;
}

/** The Check and health services on a grpc-js server with the limits above; not bound to any port. */
function grpcServer(decide: Decide, ready: () => boolean, maxMessageBytes: number, logger: Logger) {
  const services = loadServices();
  const server = new grpc.Server({
    "grpc.max_receive_message_length": maxMessageBytes,
    "grpc.max_send_message_length": 1024 * 1024,
    "grpc.max_concurrent_streams": MAX_STREAMS,
    "grpc-node.max_session_memory": MAX_SESSION_MEMORY_MB,
    "grpc.keepalive_time_ms": 60_000,
    "grpc.keepalive_timeout_ms": 20_000,
    // Not "grpc.enable_channelz": 0: grpc-js 1.14 then no longer tracks sessions for forceShutdown, and a call
    // still open after --shutdown-timeout would hold the stop (test/service/grpc/shutdown.test.ts).
  });
  const health = healthService(ready);
  server.addService(services.authorization, { Check: checkHandler(decide, logger) });
  server.addService(services.health, health.handlers);
  const close = (graceMs: number): Promise<void> => {
    health.stop();
    return new Promise<void>((resolve) => {
      const force = setTimeout(() => server.forceShutdown(), graceMs);
      server.tryShutdown(() => {
        clearTimeout(force);
        resolve();
      });
    });
  };
  return { server, close };
}

/** Binds the gRPC port; rejects with the bind error (the caller names the option). */
export async function startGrpc(
  decide: Decide,
  ready: () => boolean,
  options: GrpcOptions,
  logger: Logger,
): Promise<GrpcService> {
  const { server, close } = grpcServer(decide, ready, options.maxMessageBytes, logger);
  const host = options.host.includes(":") && !options.host.startsWith("[") ? `[${options.host}]` : options.host;
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${host}:${options.port}`, grpc.ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    );
  });
  return { address: `${host}:${port}`, close };
}

/**
 * The gRPC services of a cluster worker: the primary owns the port and hands each accepted connection over,
 * served here through grpc-js's public connection injector (the same server, limits and stop as startGrpc).
 */
export function grpcForHandoff(
  decide: Decide,
  ready: () => boolean,
  maxMessageBytes: number,
  logger: Logger,
): GrpcHandoff {
  const { server, close } = grpcServer(decide, ready, maxMessageBytes, logger);
  const injector = server.createConnectionInjector(grpc.ServerCredentials.createInsecure());
  return { accept: (socket) => injector.injectConnection(socket), close };
}
