/**
 * The decision port: the HTTP server of POST /decide, the gateways' forward-auth shapes, AuthZEN (and, without
 * --admin-port, /health, /ready and /metrics). With `handoff` (cluster workers) the primary owns the port and
 * hands each accepted connection over (accept); the server then listens only on a private Unix socket, because
 * node:http enforces its headers and request timeouts only on the connections of a listening server. A stop
 * first stops accepting (what already connected is accepted), then answers every accepted connection, cutting
 * what is left at the deadline.
 */
import { createServer, type RequestListener, type Server } from "node:http";
import type { Socket } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Logger } from "pino";
import type { ServiceConfig } from "../config.js";
import { ConnectionDrain, stopAccepting } from "../connection-drain.js";
import type { Decide } from "../decide/decide.js";
import { decisionListener } from "../http/listener.js";
import type { Part } from "../part-stack.js";
import { listenHttp } from "./listen.js";

export interface DecisionPort {
  server: Server;
  /** Where it listens ("" with handoff or without listening). */
  url: string;
  /** With handoff: a connection accepted by the cluster primary, to be served here. */
  accept: (socket: Socket) => void;
}

export interface PortOptions {
  /** false: create the servers without binding them (portier check-config). */
  listen?: boolean | undefined;
  handoff?: boolean | undefined;
}

/** `stopping`: set by the first step of a stop; every answer then closes its connection. */
export async function decisionPort(
  config: ServiceConfig,
  options: PortOptions,
  decide: Decide,
  app: RequestListener,
  logger: Logger,
  stopping: () => boolean,
  /** With the AuthZEN endpoints on: their POSTs, answered before the app (src/service/authzen/router.ts). */
  authzen?: Parameters<typeof decisionListener>[4],
): Promise<Part<DecisionPort>> {
  const server = createServer(
    // Header and request timeouts are enforced by a sweep every connectionsCheckingInterval.
    {
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, config.headersTimeoutMs),
    },
    decisionListener(decide, { maxBytes: config.maxBodyBytes, timeoutMs: config.bodyTimeoutMs }, app, logger, authzen),
  );
  // While stopping, every answer closes its connection, so keep-alive clients cannot hold the server open.
  server.prependListener("request", (_req, res) => {
    if (stopping()) res.shouldKeepAlive = false;
  });
  server.keepAliveTimeout = config.keepAliveTimeoutMs;
  const connections = new ConnectionDrain(server);
  let url = "";
  let privateDir: string | undefined;
  if (options.listen !== false && options.handoff) {
    // A directory only this user can enter: nothing else connects to this socket.
    const dir = mkdtempSync(join(tmpdir(), "portier-worker-"));
    privateDir = dir;
    const path = join(dir, "http.sock");
    await new Promise<void>((resolve) => server.listen({ path, exclusive: true }, resolve));
  } else if (options.listen !== false) url = await listenHttp(server, config.port, config.host);
  return {
    value: { server, url, accept: (socket) => void server.emit("connection", socket) },
    close: {
      accept: () => stopAccepting(server),
      drain: async ({ deadline }) => {
        await connections.drain(deadline);
        if (privateDir) rmSync(privateDir, { recursive: true, force: true });
      },
    },
  };
}
