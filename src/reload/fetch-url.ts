/**
 * One HTTP GET of a reloaded source, through the one client (http-client.ts: timeouts, abort, no proxy, no
 * redirects, userinfo sent as Basic authentication, errors that never carry a secret): ETag / If-None-Match,
 * and a cap on the body read as it arrives (refused as soon as it is passed). Errors carry the HTTP code.
 * `openUrl` streams the body (a large directory feed is never held in memory); `fetchUrl` collects it.
 * A body sent with `Content-Encoding: gzip` is inflated as it streams, the wire bytes and the inflated
 * bytes each capped.
 */
import type { Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import { codeOf, messageOf } from "../errors/caught.js";
import { byteCap, FetchError, sendRequest, type HttpExchange } from "./http-client.js";
import { redactUrls } from "./redact-url.js";

export interface FetchOptions {
  etag?: string | undefined;
  /** Bound on the whole exchange, body included. */
  timeoutMs: number;
  /** Longest wait for the next bytes of the answer (default: timeoutMs). */
  idleTimeoutMs?: number;
  /** Cap on the bytes on the wire. */
  maxBytes: number;
  /** Cap on the body inflated from `Content-Encoding: gzip` (default maxBytes). */
  maxInflatedBytes?: number;
  accept?: string;
  /** Aborts the exchange (e.g. the source is closed). */
  signal?: AbortSignal;
}

export type FetchResult =
  { status: 304; httpCode: 304 } | { status: 200; httpCode: number; bytes: Uint8Array; etag: string | undefined };

/** An answer whose body is still to be read: `body` yields the decoded bytes, failing with a FetchError. */
export type OpenedUrl =
  { status: 304; httpCode: 304 } | { status: 200; httpCode: number; etag: string | undefined; body: Readable };

/**
 * Sends the GET and reads the status and headers. A 304 is not modified, a 2xx gives the body as a stream
 * (read it to the end or destroy it), anything else (redirects included) is a FetchError with the code.
 */
export async function openUrl(rawUrl: string, o: FetchOptions): Promise<OpenedUrl> {
  const shown = redactUrls(rawUrl);
  const headers: Record<string, string> = { "accept-encoding": "gzip" };
  if (o.accept) headers.accept = o.accept;
  if (o.etag) headers["if-none-match"] = o.etag;
  const { res, failure }: HttpExchange = await sendRequest(rawUrl, {
    method: "GET",
    headers,
    timeoutMs: o.timeoutMs,
    idleTimeoutMs: o.idleTimeoutMs,
    signal: o.signal,
  });
  const status = res.statusCode ?? 0;
  if (status === 304) {
    res.destroy();
    return { status: 304, httpCode: 304 };
  }
  if (status < 200 || status > 299) {
    res.destroy();
    throw new FetchError(`GET ${shown} answered HTTP ${status}`, status);
  }
  const declared = Number(res.headers["content-length"] ?? NaN);
  if (declared > o.maxBytes) {
    res.destroy();
    throw new FetchError(
      `GET ${shown}: the body (${declared} bytes) is larger than the limit of ${o.maxBytes} bytes`,
      status,
    );
  }
  const encoding = (res.headers["content-encoding"] ?? "identity").trim().toLowerCase();
  if (encoding !== "identity" && encoding !== "gzip" && encoding !== "x-gzip") {
    res.destroy();
    throw new FetchError(`GET ${shown}: unsupported Content-Encoding "${encoding}" (gzip or none)`, status);
  }
  const stages: Readable[] = [
    res.pipe(
      byteCap(
        o.maxBytes,
        () => new FetchError(`GET ${shown}: the body is larger than the limit of ${o.maxBytes} bytes`, status),
      ),
    ),
  ];
  if (encoding !== "identity") {
    const max = o.maxInflatedBytes ?? o.maxBytes;
    const gunzip = createGunzip({ chunkSize: 256 * 1024 });
    stages.push(stages[0]!.pipe(gunzip));
    stages.push(
      gunzip.pipe(
        byteCap(
          max,
          () => new FetchError(`GET ${shown}: the inflated body is larger than the limit of ${max} bytes`, status),
        ),
      ),
    );
  }
  // pipe() does not forward errors: the last stage fails with the first error of any stage, as a FetchError.
  const body = stages[stages.length - 1]!;
  let failed = false;
  const onError = (err: unknown) => {
    if (failed) return;
    failed = true;
    const mapped = codeOf(err)?.startsWith("Z_")
      ? new FetchError(`GET ${shown}: the gzip body is corrupt (${messageOf(err)})`, status)
      : failure(err);
    res.destroy();
    for (const s of stages) if (s !== body) s.destroy();
    body.destroy(mapped);
  };
  res.on("error", onError);
  res.once("aborted", () => onError(new Error("the connection closed before the end of the body")));
  for (const s of stages) s.on("error", onError);
  // A closed connection before the declared end is a truncated body, never a complete one.
  res.once("end", () => {
    if (!res.complete) onError(new Error("the connection closed before the end of the body"));
  });
  return { status: 200, httpCode: status, etag: res.headers.etag ?? undefined, body };
}

/** One GET with the body collected (bundles, key sets: megabytes at most). */
export async function fetchUrl(rawUrl: string, o: FetchOptions): Promise<FetchResult> {
  const opened = await openUrl(rawUrl, o);
  if (opened.status === 304) return opened;
  const chunks: Buffer[] = [];
  for await (const chunk of opened.body) chunks.push(chunk as Buffer);
  return { status: 200, httpCode: opened.httpCode, bytes: Buffer.concat(chunks), etag: opened.etag };
}
