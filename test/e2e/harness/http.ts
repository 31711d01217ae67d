/**
 * A raw HTTP client for the end-to-end tests: node:http with the request path sent byte for byte (no
 * URL normalisation, so percent-encoded and decomposed paths reach the gateway as written), no
 * keep-alive, and a bounded time.
 */
import { request } from "node:http";

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export function send(
  baseUrl: string,
  path: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string; timeoutMs?: number } = {},
): Promise<RawResponse> {
  const base = new URL(baseUrl);
  return new Promise<RawResponse>((resolve, reject) => {
    const req = request(
      { host: base.hostname, port: base.port, method: opts.method ?? "GET", path, headers: opts.headers ?? {}, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    req.setTimeout(opts.timeoutMs ?? 10_000, () => req.destroy(new Error(`${opts.method ?? "GET"} ${baseUrl}${path}: no answer within ${opts.timeoutMs ?? 10_000} ms`)));
    req.on("error", reject);
    req.end(opts.body);
  });
}

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}
