/**
 * The service in this process without a socket, for the tests where the socket is not what is under test
 * (decision endpoints, gateway headers, /decide bodies, operator endpoints, 404/405, reloads seen through
 * /decide): `startService` builds everything as `portier serve` does, and each request comes to the decision
 * server that startService made over an in-memory connection (a `duplexPair`), handed over as node:http's
 * documented `server.emit("connection", duplex)`, as the cluster handoff hands over a socket. So the request
 * passes through node:http's own parser and every listener startService attached (the decision adapters, the
 * Express app, the connection bookkeeping) with no port, no kernel socket and no look-alike of the composition.
 * Timeouts, slow clients, keep-alive and Connection: close, signals and drain, workers, gRPC and the gateways
 * keep a real socket (`serveInProcess` in helpers.ts, or a child process).
 *
 * Not light-my-request (fastify's `inject`): its fake request and response lose their methods when Express
 * swaps their prototypes for its own (Express answers come back empty); it rewires Express's prototypes only
 * when the dispatch function is the Express app itself (ours is the decision listener in front of it), and then
 * for every Express app of the process, real sockets included.
 */
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { duplexPair } from "node:stream";
import { startService, type RunningService } from "../../src/service/index.js";
import { decideThrough, serveConfig } from "./helpers.js";
import type { RawResponse } from "../e2e/harness/http.js";
import type { DecideJson } from "../support/answers.js";

/** Requests to a service in this process, over an in-memory connection each. */
export interface Injector {
  /**
   * `fetch(path, init)` without a socket: the request is built by the platform's own `Request` (so its headers
   * and body are the ones fetch sends: a string body is text/plain unless told, a body has its Content-Length),
   * and the answer is a `Response`.
   */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /**
   * As `send` of test/e2e/harness/http.ts: headers as a flat [name, value, ...] list (a name may repeat, each
   * spelling kept) or an object; the answer's headers as node:http's client shows them.
   */
  send(
    path: string,
    opts?: { method?: string; headers?: Record<string, string | string[]> | string[]; body?: string | Buffer },
  ): Promise<RawResponse>;
}

/** The service of `serveInjected`: requests, its log lines and stopping it, as InProcessService has. */
export interface InjectedService extends Injector {
  service: RunningService;
  /** The JSON log lines, as `portier serve` would print them on stdout. */
  output(): string;
  /** Always empty: kept so that a test reads the same whether the service runs here or as a process. */
  stderr(): string;
  stop(): Promise<void>;
}

/** Statuses whose answer has no body (a `Response` refuses one). */
const NULL_BODY = new Set([101, 204, 205, 304]);
/** No answer within this long fails the request (the service never takes it; a hang must not hang the suite). */
const ANSWER_MS = 10_000;

/** Requests into `service`'s decision server, each on a connection of its own made in memory. */
export function injector(service: RunningService): Injector {
  const exchange = (
    path: string,
    method: string,
    headers: Record<string, string | string[]> | string[],
    body: string | Buffer | undefined,
  ) =>
    new Promise<{ status: number; statusText: string; headers: IncomingHttpHeaders; body: Buffer }>(
      (resolve, reject) => {
        const req = httpRequest(
          {
            method,
            path,
            headers,
            // No agent: the request says Connection: close, and each request has its own connection.
            createConnection: () => {
              const [client, server] = duplexPair();
              service.server.emit("connection", server);
              return client;
            },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => chunks.push(c));
            res.on("end", () =>
              resolve({
                status: res.statusCode ?? 0,
                statusText: res.statusMessage ?? "",
                headers: res.headers,
                body: Buffer.concat(chunks),
              }),
            );
            res.on("error", reject);
          },
        );
        // Not req.setTimeout: that is the socket's, and an in-memory stream has none.
        const timer = setTimeout(
          () => req.destroy(new Error(`${method} ${path}: no answer within ${ANSWER_MS} ms (in-process)`)),
          ANSWER_MS,
        );
        req.on("close", () => clearTimeout(timer));
        req.on("error", reject);
        req.end(body);
      },
    );
  return {
    async fetch(path, init) {
      const request = new Request(new URL(path, "http://in-process.invalid"), init);
      // The path as fetch sends it (dot segments resolved, characters escaped).
      const url = new URL(request.url);
      const headers: Record<string, string> = { host: "in-process.invalid" };
      request.headers.forEach((value, name) => (headers[name] = value));
      const body = request.body === null ? undefined : Buffer.from(await request.arrayBuffer());
      if (body !== undefined) headers["content-length"] = String(body.length);
      const res = await exchange(url.pathname + url.search, request.method, headers, body);
      const answerHeaders = new Headers();
      for (const [name, value] of Object.entries(res.headers)) {
        if (value === undefined) continue;
        for (const v of Array.isArray(value) ? value : [value]) answerHeaders.append(name, v);
      }
      return new Response(NULL_BODY.has(res.status) ? null : res.body, {
        status: res.status,
        statusText: res.statusText,
        headers: answerHeaders,
      });
    },
    async send(path, opts = {}) {
      let headers = opts.headers ?? {};
      // Node adds no Host header to a raw header list.
      if (Array.isArray(headers) && !headers.some((h, i) => i % 2 === 0 && h.toLowerCase() === "host"))
        headers = ["Host", "in-process.invalid", ...headers];
      const res = await exchange(path, opts.method ?? "GET", headers, opts.body);
      return { status: res.status, headers: res.headers, body: res.body.toString("utf8") };
    },
  };
}

/**
 * `portier serve ARGS` in this process, not listening: the same configuration (flags, then `env`, then
 * --config) and the same startService, its logger keeping its level and redaction, its lines in output().
 * A start-up or configuration failure rejects with the message `portier serve` would print.
 */
export async function serveInjected(args: string[], env: Record<string, string> = {}): Promise<InjectedService> {
  let out = "";
  const service = await startService(serveConfig(args, env), {
    listen: false,
    logDestination: { write: (line: string) => void (out += line) },
  });
  let stopped: Promise<void> | undefined;
  return {
    ...injector(service),
    service,
    output: () => out,
    stderr: () => "",
    stop: () => (stopped ??= service.close(1000)),
  };
}

/** POST /decide with `body` (a string is sent as is), as `decide` of helpers.ts does over a socket. */
export function decide<T = DecideJson>(svc: Injector, body: unknown): Promise<{ status: number; json: T }> {
  return decideThrough<T>((path, init) => svc.fetch(path, init), body);
}
