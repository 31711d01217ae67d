/**
 * One HTTP GET of a reloaded source: ETag / If-None-Match, a timeout, a cap on the body read as it
 * arrives (refused as soon as it is passed), no redirects, and userinfo in the URL sent as Basic
 * authentication instead of being left in the URL. Errors carry the HTTP code and never the secrets.
 */
import { PortierError } from "../errors/portier-error.js";
import { redactUrls } from "./redact-url.js";

export class FetchError extends PortierError {
  static override readonly code = "fetch_failed";
  constructor(message: string, readonly httpCode?: number) {
    super(message);
  }
}

export interface FetchOptions {
  etag?: string | undefined;
  timeoutMs: number;
  maxBytes: number;
  accept?: string;
}

export type FetchResult = { status: 304; httpCode: 304 } | { status: 200; httpCode: number; bytes: Uint8Array; etag: string | undefined };

function splitCredentials(raw: string): { url: string; authorization?: string } {
  const u = new URL(raw);
  if (!u.username && !u.password) return { url: raw };
  const authorization = `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString("base64")}`;
  u.username = "";
  u.password = "";
  return { url: u.toString(), authorization };
}

export async function fetchUrl(rawUrl: string, o: FetchOptions): Promise<FetchResult> {
  const shown = redactUrls(rawUrl);
  try {
    const { url, authorization } = splitCredentials(rawUrl);
    const headers: Record<string, string> = {};
    if (o.accept) headers.accept = o.accept;
    if (o.etag) headers["if-none-match"] = o.etag;
    if (authorization) headers.authorization = authorization;
    const signal = AbortSignal.timeout(o.timeoutMs);
    const res = await fetch(url, { headers, signal, redirect: "error" });
    if (res.status === 304) {
      await res.body?.cancel();
      return { status: 304, httpCode: 304 };
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new FetchError(`GET ${shown} answered HTTP ${res.status}`, res.status);
    }
    const declared = Number(res.headers.get("content-length") ?? NaN);
    if (declared > o.maxBytes) {
      await res.body?.cancel();
      throw new FetchError(`GET ${shown}: the body (${declared} bytes) is larger than the limit of ${o.maxBytes} bytes`, res.status);
    }
    const chunks: Uint8Array[] = [];
    let size = 0;
    if (res.body) {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        size += chunk.length;
        if (size > o.maxBytes) throw new FetchError(`GET ${shown}: the body is larger than the limit of ${o.maxBytes} bytes`, res.status);
        chunks.push(chunk);
      }
    }
    return { status: 200, httpCode: res.status, bytes: Buffer.concat(chunks), etag: res.headers.get("etag") ?? undefined };
  } catch (err) {
    if (err instanceof FetchError) throw err;
    const e = err as Error & { cause?: { code?: string; message?: string } };
    const why = e.name === "TimeoutError" ? `no answer within ${o.timeoutMs} ms` : (e.cause?.code ?? e.cause?.message ?? e.message);
    throw new FetchError(`GET ${shown} failed: ${redactUrls(String(why))}`);
  }
}
