/**
 * A raw HTTP/1.1 client for the end-to-end tests: writes the request-target byte for byte on a TCP
 * socket, so targets node:http refuses to send (a space, a tab, raw UTF-8, "*") reach the gateway as
 * written. One request per connection (Connection: close), a bounded time, the answer's status,
 * headers (names in lower case) and body (chunked bodies joined).
 */
import { connect } from "node:net";
import type { RawResponse } from "./http.js";

function dechunk(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = body.indexOf("\r\n", at);
    if (eol < 0) break;
    const size = parseInt(body.subarray(at, eol).toString("latin1"), 16);
    if (!Number.isFinite(size) || size === 0) break;
    parts.push(body.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

function parse(raw: Buffer): RawResponse {
  const end = raw.indexOf("\r\n\r\n");
  const head = raw.subarray(0, end < 0 ? raw.length : end).toString("latin1").split("\r\n");
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? "")?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const colon = line.indexOf(":");
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = end < 0 ? Buffer.alloc(0) : raw.subarray(end + 4);
  if (/chunked/i.test(headers["transfer-encoding"] ?? "")) body = dechunk(body);
  return { status, headers, body: body.toString("utf8") };
}

export function sendRaw(
  baseUrl: string,
  target: string | Buffer,
  opts: { method?: string; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<RawResponse> {
  const base = new URL(baseUrl);
  const head = [`Host: ${base.host}`, "Connection: close", ...Object.entries(opts.headers ?? {}).map(([k, v]) => `${k}: ${v}`)].join("\r\n");
  const bytes = Buffer.concat([
    Buffer.from(`${opts.method ?? "GET"} `, "latin1"),
    typeof target === "string" ? Buffer.from(target, "latin1") : target,
    Buffer.from(` HTTP/1.1\r\n${head}\r\n\r\n`, "latin1"),
  ]);
  return new Promise<RawResponse>((resolve, reject) => {
    const socket = connect(Number(base.port), base.hostname);
    const chunks: Buffer[] = [];
    socket.setTimeout(opts.timeoutMs ?? 10_000, () => socket.destroy(new Error(`${String(target)}: no answer within ${opts.timeoutMs ?? 10_000} ms`)));
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("end", () => resolve(parse(Buffer.concat(chunks))));
    socket.on("error", reject);
    socket.write(bytes);
  });
}
