/**
 * One upload of OPA's decision-log protocol: POST of a gzip-compressed JSON array of events, with
 * Content-Encoding: gzip, to the collector's URL, within a time limit. The answer decides the batch's fate:
 * 2xx delivered; 400 or 422 refused as malformed (retrying cannot help: dropped and counted); 413 too large
 * (split); anything else, a timeout or a connection failure: kept and retried. The collector's body is read
 * and thrown away (bounded by the time limit), never logged. Credentials: Basic from the URL's userinfo, or a
 * bearer token; the URL shown anywhere is redacted (src/reload/redact-url.ts).
 */
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { redactUrls } from "../../reload/index.js";

export type UploadOutcome =
  | { kind: "ok"; status: number }
  | { kind: "malformed"; status: number }
  | { kind: "too_large"; status: number }
  | { kind: "retry"; why: string };

/** The collector: its URL without credentials, the Basic credentials it carried, and how to show it. */
export interface CollectorTarget {
  url: URL;
  basic: string | undefined;
  shown: string;
}

export function collectorTarget(raw: string): CollectorTarget {
  const url = new URL(raw);
  const basic =
    url.username || url.password
      ? Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString("base64")
      : undefined;
  url.username = "";
  url.password = "";
  return { url, basic, shown: redactUrls(raw) };
}

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
export function upload(target: CollectorTarget, gzipped: Buffer, options: UploadOptions): Promise<UploadOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (outcome: UploadOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      resolve(outcome);
    };
    const headers: Record<string, string | number> = {
      "content-type": "application/json",
      "content-encoding": "gzip",
      "content-length": gzipped.length,
    };
    if (target.basic) headers["authorization"] = `Basic ${target.basic}`;
    else if (options.token) headers["authorization"] = `Bearer ${options.token}`;
    const send = target.url.protocol === "https:" ? httpsRequest : httpRequest;
    const req = send(target.url, { method: "POST", headers }, (res: IncomingMessage) => {
      res.on("error", () => done({ kind: "retry", why: "the collector's answer was cut" }));
      res.on("end", () => done(outcomeOf(res.statusCode ?? 0)));
      res.resume();
    });
    const timer = setTimeout(() => {
      req.destroy();
      done({ kind: "retry", why: `no answer within ${options.timeoutMs} ms` });
    }, options.timeoutMs);
    const onAbort = () => {
      req.destroy();
      done({ kind: "retry", why: "stopped" });
    };
    options.signal?.addEventListener("abort", onAbort, { once: true });
    // The error's text may name the URL: shown redacted.
    req.on("error", (err: NodeJS.ErrnoException) => done({ kind: "retry", why: redactUrls(err.code ?? err.message) }));
    req.end(gzipped);
  });
}
