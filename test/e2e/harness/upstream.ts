/**
 * The small upstream behind the gateways: a node:http server on 127.0.0.1 (port 0) answering JSON with
 * the method and raw path it served and the X-Portier-* headers it received (any spelling), and remembering every
 * request so a test can tell whether a denied call reached it. `startRawUpstream` does the same on a bare
 * socket for raw UTF-8 request targets, which node:http refuses.
 */
import { createServer, type IncomingMessage } from "node:http";
import { createServer as createNetServer, type Socket } from "node:net";
import { LOOPBACK, listenOnLoopback } from "./net.js";

export interface UpstreamSeen {
  method: string;
  path: string;
  /** The X-Portier-* headers as received in any spelling ("_" for "-" too), names in lower case. */
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
    if (name.replace(/_/g, "-").startsWith("x-portier-") && value !== undefined)
      out[name] = Array.isArray(value) ? value.join(", ") : value;
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

export interface RawUpstreamSeen {
  /** The request line's target, byte for byte (latin1: one character per byte). */
  target: string;
  /** The X-Portier-* headers as received, names in lower case. */
  portier: Record<string, string>;
}

export interface RunningRawUpstream {
  port: number;
  seen: RawUpstreamSeen[];
  close(): Promise<void>;
}

/**
 * An upstream on a bare socket for request targets node:http refuses (raw UTF-8 bytes, which nginx passes
 * on as received): records the target byte for byte and answers 200 with an empty body.
 */
export async function startRawUpstream(): Promise<RunningRawUpstream> {
  const seen: RawUpstreamSeen[] = [];
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    let head = "";
    socket.on("data", (chunk: Buffer) => {
      head += chunk.toString("latin1");
      const end = head.indexOf("\r\n\r\n");
      if (end === -1) return;
      const [line = "", ...fields] = head.slice(0, end).split("\r\n");
      const portier: Record<string, string> = {};
      for (const field of fields) {
        const colon = field.indexOf(":");
        const name = field.slice(0, colon).trim().toLowerCase();
        if (name.replace(/_/g, "-").startsWith("x-portier-")) portier[name] = field.slice(colon + 1).trim();
      }
      seen.push({ target: line.split(" ")[1] ?? "", portier });
      socket.end(`HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-Upstream: ${UPSTREAM_MARK}\r\nConnection: close\r\n\r\n`);
    });
    socket.on("error", () => socket.destroy());
  });
  const { port, close } = await listenOnLoopback(server);
  return {
    port,
    seen,
    close: () => {
      for (const s of sockets) s.destroy();
      return close();
    },
  };
}
