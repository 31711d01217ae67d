/**
 * --grpc-port: the gRPC ext_authz and health services beside the HTTP port (the same decide). With `handoff` the
 * cluster primary owns the port and hands its connections over. A stop closes the port with the decision port
 * (calls in flight finish, cut at the deadline) and waits for it while the HTTP connections drain.
 */
import type { Socket } from "node:net";
import type { Logger } from "pino";
import { messageOf } from "../../errors/caught.js";
import type { ServiceConfig } from "../config.js";
import type { Decide } from "../decide/decide.js";
import { grpcForHandoff, startGrpc, type GrpcHandoff, type GrpcService } from "../grpc/server.js";
import type { Part } from "../part-stack.js";
import { StartError } from "../start-error.js";
import type { PortOptions } from "./decision-port.js";

export interface GrpcPort {
  /** host:port, when bound here. */
  address: string | undefined;
  /** With handoff: a gRPC connection accepted by the cluster primary, to be served here. */
  accept: (socket: Socket) => void;
}

export async function grpcPort(
  config: ServiceConfig,
  options: PortOptions,
  decide: Decide,
  ready: () => boolean,
  logger: Logger,
): Promise<Part<GrpcPort>> {
  if (options.listen === false || config.grpcPort === undefined)
    return { value: { address: undefined, accept: (socket) => socket.destroy() } };
  const grpc: GrpcService | GrpcHandoff = options.handoff
    ? grpcForHandoff(decide, ready, config.grpcMaxMessageBytes, logger)
    : await bindGrpc(config, decide, ready, logger);
  let closing: Promise<void> | undefined;
  return {
    value: {
      address: "address" in grpc ? grpc.address : undefined,
      accept: (socket) => ("accept" in grpc ? grpc.accept(socket) : socket.destroy()),
    },
    close: {
      accept: ({ deadline }) => void (closing = grpc.close(Math.max(0, deadline - Date.now()))),
      drain: () => closing,
    },
  };
}

/** Binds the port; a bind failure names the option. */
async function bindGrpc(config: ServiceConfig, decide: Decide, ready: () => boolean, logger: Logger) {
  const host = config.grpcHost ?? config.host;
  try {
    return await startGrpc(
      decide,
      ready,
      { host, port: config.grpcPort ?? 0, maxMessageBytes: config.grpcMaxMessageBytes },
      logger,
    );
  } catch (err) {
    throw new StartError(
      `cannot listen on ${host}:${config.grpcPort} for gRPC: ${messageOf(err).split("\n")[0]}; stop the other ` +
        `process or choose another --grpc-port (or check --grpc-host)`,
    );
  }
}
