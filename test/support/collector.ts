/**
 * Test support: a real HTTP collector of OPA's decision-log upload protocol (POST of gzip JSON arrays), on
 * 127.0.0.1 and a port of its own, that a test can make fail: answer 5xx, 400 or 413, stall (accept and never
 * answer), refuse connections (stopped, then started again on the same port), and come back. It keeps every
 * event it accepted, the raw bodies, and the Authorization headers it saw. Like a collector that trusts the
 * header (OPA's protocol sends Content-Encoding: gzip), it inflates a body only when Content-Encoding says gzip:
 * a gzip body sent without the header is not JSON, and gets 400, so an upload that loses the header fails.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { gunzipSync } from "node:zlib";

export type CollectorMode = "ok" | "fail" | "stall" | "malformed" | "too_large";

export interface Collector {
  url: string;
  port: number;
  /** Events accepted (2xx), in the order received. */
  events: Record<string, unknown>[];
  /** Every POST, accepted or not: its compressed size, event count and Authorization header. */
  posts: { bytes: number; events: number; authorization: string | undefined; status: number | "stalled" }[];
  mode: CollectorMode;
  /** With mode "too_large": bodies larger than this many compressed bytes get 413. */
  maxBytes: number;
  /** Stops listening (connections refused) until start(). */
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startCollector(): Promise<Collector> {
  const sockets = new Set<Socket>();
  const stalled = new Set<ServerResponse>();
  let server: Server;
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      let events: Record<string, unknown>[] = [];
      try {
        const gzip = req.headers["content-encoding"]?.trim().toLowerCase() === "gzip";
        events = JSON.parse((gzip ? gunzipSync(body) : body).toString()) as Record<string, unknown>[];
        if (!Array.isArray(events)) throw new TypeError("not an array");
      } catch {
        res.writeHead(400).end("not a JSON array (inflated when Content-Encoding: gzip)");
        c.posts.push({ bytes: body.length, events: 0, authorization: req.headers.authorization, status: 400 });
        return;
      }
      const post = { bytes: body.length, events: events.length, authorization: req.headers.authorization };
      const mode = c.mode === "too_large" && body.length <= c.maxBytes ? "ok" : c.mode;
      if (mode === "stall") {
        stalled.add(res);
        c.posts.push({ ...post, status: "stalled" });
        return;
      }
      const status = { ok: 204, fail: 503, malformed: 400, too_large: 413 }[mode];
      c.posts.push({ ...post, status });
      if (status === 204) c.events.push(...events);
      res.writeHead(status).end();
    });
  };
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server = createServer(handle);
      server.on("connection", (s: Socket) => {
        sockets.add(s);
        s.on("close", () => sockets.delete(s));
      });
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => resolve());
    });
  await listen(0);
  const port = (server!.address() as { port: number }).port;
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const res of stalled) res.destroy();
      stalled.clear();
      server.close(() => resolve());
      for (const s of sockets) s.destroy();
    });
  const c: Collector = {
    url: `http://127.0.0.1:${port}/logs`,
    port,
    events: [],
    posts: [],
    mode: "ok",
    maxBytes: Infinity,
    stop,
    start: () => listen(port),
    close: stop,
  };
  return c;
}

/** How many times each decision id was received. */
export function idCounts(events: Record<string, unknown>[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const e of events) counts.set(String(e.decision_id), (counts.get(String(e.decision_id)) ?? 0) + 1);
  return counts;
}
