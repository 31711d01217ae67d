/**
 * The one HTTP client of Portier's outbound calls: the bundle, directory and key URLs (fetch-url.ts) and the
 * decision-log collector (src/service/decision-logs/upload.ts). node:http(s) on agents of its own, so that no
 * proxy named by the environment (NODE_USE_ENV_PROXY with HTTP_PROXY) ever sees a request or its credentials;
 * no redirect followed; userinfo in the URL sent as Basic authentication and never left in the URL; one bound
 * on the whole exchange (body included), one on idle time, and the caller's abort signal; bodies capped as
 * they arrive (byteCap); every failure a FetchError whose message names the URL redacted and never a secret.
 * node:http rather than fetch(), whose transparent decoding hides the wire size.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { Transform, type TransformCallback } from "node:stream";
import { codeOf, messageOf } from "../errors/caught.js";
import { PortierError } from "../errors/portier-error.js";
import { redactUrls } from "./redact-url.js";

export class FetchError extends PortierError {
  static override readonly code = "fetch_failed";
  constructor(
    message: string,
    readonly httpCode?: number,
    /** For a failed exchange: why, in words without the method and URL ("no answer within 100 ms", "ECONNREFUSED"). */
    readonly why?: string,
  ) {
    super(message);
  }
}

/** Where a request goes: the URL without its userinfo, the Basic authorization it carried, the URL shown. */
export interface HttpTarget {
  url: URL;
  authorization: string | undefined;
  /** The URL as logs, errors and /ready show it (redacted). */
  shown: string;
}

/** Throws a TypeError for a URL that cannot be parsed. */
export function httpTarget(raw: string): HttpTarget {
  const url = new URL(raw);
  const shown = redactUrls(raw);
  if (!url.username && !url.password) return { url, authorization: undefined, shown };
  const userPass = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  url.username = "";
  url.password = "";
  return { url, authorization: `Basic ${Buffer.from(userPass).toString("base64")}`, shown };
}

export interface HttpRequestOptions {
  method: "GET" | "POST";
  headers?: Record<string, string | number>;
  body?: Buffer;
  /** Bound on the whole exchange, the answer's body included. */
  timeoutMs: number;
  /** Longest wait for the next bytes of the answer. */
  idleTimeoutMs?: number | undefined;
  /** Aborts the exchange (a source closed, the stop's deadline). */
  signal?: AbortSignal | undefined;
}

export interface HttpExchange {
  /** The answer, status and headers read; its body still to be read (or destroyed). */
  res: IncomingMessage;
  /** A failure while the body is read, as this exchange's FetchError (timeout, abort, cut connection). */
  failure: (err: unknown) => FetchError;
  /** Whether the bound on the whole exchange has passed. */
  timedOut: () => boolean;
}

/** Agents of the client's own, configured as Node's global ones but never given a proxy by the environment. */
const HTTP_AGENT = new HttpAgent({ keepAlive: true, scheduling: "lifo", timeout: 5000 });
const HTTPS_AGENT = new HttpsAgent({ keepAlive: true, scheduling: "lifo", timeout: 5000 });

/** Passes bytes through and fails as soon as more than `max` went by. */
export function byteCap(max: number, tooLarge: () => Error): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback) {
      seen += chunk.length;
      if (seen > max) return done(tooLarge());
      done(null, chunk);
    },
  });
}

/**
 * Sends the request and resolves once the answer's status and headers are read (whatever the status); rejects
 * with a FetchError (`METHOD URL failed: why`) when there is no answer or the URL cannot be used.
 */
export async function sendRequest(to: HttpTarget | string, o: HttpRequestOptions): Promise<HttpExchange> {
  const shown = typeof to === "string" ? redactUrls(to) : to.shown;
  const timeout = AbortSignal.timeout(o.timeoutMs);
  const signal = o.signal ? AbortSignal.any([timeout, o.signal]) : timeout;
  const failure = (err: unknown): FetchError => {
    if (err instanceof FetchError) return err;
    const why = reason(err, o, timeout.aborted);
    return new FetchError(`${o.method} ${shown} failed: ${why}`, undefined, why);
  };
  try {
    const { url, authorization } = typeof to === "string" ? httpTarget(to) : to;
    if (url.protocol !== "http:" && url.protocol !== "https:")
      throw new FetchError(`${o.method} ${shown}: only http and https URLs are supported`);
    const headers = { ...o.headers };
    if (authorization) headers.authorization = authorization;
    const https = url.protocol === "https:";
    const send = https ? httpsRequest : httpRequest;
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = send(url, { method: o.method, headers, signal, agent: https ? HTTPS_AGENT : HTTP_AGENT }, resolve);
      req.once("error", reject);
      if (o.idleTimeoutMs)
        req.setTimeout(o.idleTimeoutMs, () =>
          req.destroy(Object.assign(new Error("idle"), { code: "ERR_IDLE_TIMEOUT" })),
        );
      req.end(o.body);
    });
    return { res, failure, timedOut: () => timeout.aborted };
  } catch (err) {
    throw failure(err);
  }
}

/** Why an exchange failed, in words; a system error by its code; a URL in a message redacted. */
function reason(err: unknown, o: HttpRequestOptions, timedOut: boolean): string {
  if (timedOut) return `no answer within ${o.timeoutMs} ms`;
  const code = codeOf(err);
  if (code === "ERR_IDLE_TIMEOUT") return `no data for ${o.idleTimeoutMs} ms`;
  if (err instanceof Error && err.name === "AbortError") return "aborted";
  return redactUrls(code ?? messageOf(err));
}
