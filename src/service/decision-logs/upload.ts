/**
 * One upload of OPA's decision-log protocol: POST of a gzip-compressed JSON array of events, with
 * Content-Encoding: gzip, to the collector's URL, within a time limit, through the one HTTP client
 * (src/reload/http-client.ts: Basic credentials from the URL's userinfo, the URL shown redacted anywhere). The
 * answer decides the batch's fate: 2xx delivered; 400 or 422 refused as malformed (retrying cannot help:
 * dropped and counted); 413 too large (split); anything else, a timeout or a connection failure: kept and
 * retried. The collector's body is read and thrown away (bounded by the time limit), never logged. Without
 * Basic credentials, a bearer token.
 */
import { FetchError, sendRequest, type HttpExchange, type HttpTarget } from "../../reload/index.js";

export type UploadOutcome =
  | { kind: "ok"; status: number }
  | { kind: "malformed"; status: number }
  | { kind: "too_large"; status: number }
  | { kind: "retry"; why: string };

export interface UploadOptions {
  timeoutMs: number;
  /** A bearer token (the token file's), used when the URL carries no Basic credentials. */
  token: string | undefined;
  /** Aborts the upload at once (the stop's deadline). */
  signal?: AbortSignal;
}

function outcomeOf(status: number): UploadOutcome {
  if (status >= 200 && status < 300) return { kind: "ok", status };
  if (status === 400 || status === 422) return { kind: "malformed", status };
  if (status === 413) return { kind: "too_large", status };
  return { kind: "retry", why: `the collector answered ${status}` };
}

/** POSTs `gzipped` (a gzip JSON array) to the collector; never throws. */
export async function upload(target: HttpTarget, gzipped: Buffer, options: UploadOptions): Promise<UploadOutcome> {
  const headers: Record<string, string | number> = {
    "content-type": "application/json",
    "content-encoding": "gzip",
    "content-length": gzipped.length,
  };
  if (!target.authorization && options.token) headers["authorization"] = `Bearer ${options.token}`;
  const retry = (why: string): UploadOutcome => ({ kind: "retry", why: options.signal?.aborted ? "stopped" : why });
  let exchange: HttpExchange;
  try {
    exchange = await sendRequest(target, {
      method: "POST",
      headers,
      body: gzipped,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
    });
  } catch (err) {
    return retry(err instanceof FetchError ? (err.why ?? err.message) : String(err));
  }
  const { res, failure, timedOut } = exchange;
  return new Promise((resolve) => {
    // The time limit or the stop named as such; any other failure of the body is a cut answer.
    res.on("error", (err: Error) =>
      resolve(retry(timedOut() ? (failure(err).why ?? "") : "the collector's answer was cut")),
    );
    res.on("end", () => resolve(outcomeOf(res.statusCode ?? 0)));
    res.resume();
  });
}
