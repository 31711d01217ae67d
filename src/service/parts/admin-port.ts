/**
 * --admin-port: /health, /ready and /metrics apart from the decision port (shared by cluster workers like it).
 * It closes with the parts, after every decision connection is answered: its probes answer /ready 503 meanwhile.
 */
import { createServer, type RequestListener } from "node:http";
import type { ServiceConfig } from "../config.js";
import type { Part } from "../part-stack.js";
import { listenHttp } from "./listen.js";

/** The admin URL, undefined without --admin-port or without listening. */
export async function adminPort(
  config: ServiceConfig,
  listen: boolean,
  app: () => RequestListener,
): Promise<Part<string | undefined>> {
  if (config.adminPort === undefined) return { value: undefined };
  const admin = createServer(
    { headersTimeout: config.headersTimeoutMs, requestTimeout: config.requestTimeoutMs },
    app(),
  );
  const url = listen ? await listenHttp(admin, config.adminPort, config.adminHost) : undefined;
  return {
    value: url,
    close: {
      parts: () =>
        admin.listening &&
        new Promise<void>((resolve) => {
          admin.close(() => resolve());
          admin.closeAllConnections();
        }),
    },
  };
}
