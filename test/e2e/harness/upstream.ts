/**
 * The small upstream behind the gateways: a node:http server on 127.0.0.1 (port 0) answering JSON with
 * the method and raw path it served and the X-Portier-* headers it received, and remembering every
 * request so a test can tell whether a denied call reached it.
 */
import { createServer, type IncomingMessage } from "node:http";
import { LOOPBACK, listenOnLoopback } from "./net.js";

export interface UpstreamSeen {
  method: string;
  path: string;
  /** The X-Portier-* headers as received, names in lower case. */
  portier: Record<string, string>;
}

export interface RunningUpstream {
  port: number;
  url: string;
  seen: UpstreamSeen[];
  close(): Promise<void>;
}

export const UPSTREAM_MARK = "portier-e2e-upstream";

function portierHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (name.startsWith("x-portier-") && value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

export async function startUpstream(): Promise<RunningUpstream> {
  const seen: UpstreamSeen[] = [];
  const server = createServer((req, res) => {
    const entry: UpstreamSeen = { method: req.method ?? "", path: req.url ?? "", portier: portierHeaders(req) };
    seen.push(entry);
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json", "x-upstream": UPSTREAM_MARK });
      res.end(JSON.stringify({ upstream: UPSTREAM_MARK, ...entry }));
    });
  });
  server.keepAliveTimeout = 1_000;
  const { port, close } = await listenOnLoopback(server);
  return { port, url: `http://${LOOPBACK}:${port}`, seen, close };
}
