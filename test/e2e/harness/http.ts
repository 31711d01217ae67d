/**
 * A raw HTTP client for the end-to-end tests: node:http with the request path sent byte for byte (no
 * URL normalisation, so percent-encoded and decomposed paths reach the gateway as written), no
 * keep-alive, and a bounded time. Headers may repeat (an array value, or a flat [name, value, ...] list
 * that keeps each name's spelling); `sendBytes` writes a request head as given bytes (raw UTF-8 paths).
 */
import { request } from "node:http";
import { connect } from "node:net";

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export function send(
  baseUrl: string,
  path: string,
  opts: {
    method?: string;
    headers?: Record<string, string | string[]> | string[];
    body?: string;
    timeoutMs?: number;
  } = {},
): Promise<RawResponse> {
  const base = new URL(baseUrl);
  let headers = opts.headers ?? {};
  // Node adds no Host header to a raw header list.
  if (Array.isArray(headers) && !headers.some((h, i) => i % 2 === 0 && h.toLowerCase() === "host"))
    headers = ["Host", base.host, ...headers];
  return new Promise<RawResponse>((resolve, reject) => {
    const req = request(
      { host: base.hostname, port: base.port, method: opts.method ?? "GET", path, headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }),
        );
        res.on("error", reject);
      },
    );
    req.setTimeout(opts.timeoutMs ?? 10_000, () =>
      req.destroy(
        new Error(`${opts.method ?? "GET"} ${baseUrl}${path}: no answer within ${opts.timeoutMs ?? 10_000} ms`),
      ),
    );
    req.on("error", reject);
    req.end(opts.body);
  });
}

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

/**
 * Sends `head` (request line and headers, without the final blank line) byte for byte on a fresh connection
 * with Connection: close, and reads the answer's status and headers (the body is returned undecoded).
 */
export function sendBytes(baseUrl: string, head: Buffer, timeoutMs = 10_000): Promise<RawResponse> {
  const base = new URL(baseUrl);
  return new Promise<RawResponse>((resolve, reject) => {
    const socket = connect({ host: base.hostname, port: Number(base.port) }, () => {
      socket.write(Buffer.concat([head, Buffer.from("\r\nConnection: close\r\n\r\n")]));
    });
    const chunks: Buffer[] = [];
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`${baseUrl}: no answer within ${timeoutMs} ms`)));
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", reject);
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("latin1");
      const end = text.indexOf("\r\n\r\n");
      const lines = (end === -1 ? text : text.slice(0, end)).split("\r\n");
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? "")?.[1] ?? 0);
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(":");
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status, headers, body: end === -1 ? "" : text.slice(end + 4) });
    });
  });
}
