/**
 * Reads the body of POST /decide under three bounds: a JSON content type, a byte cap and a deadline.
 * A refusal is decided as early as possible (the content type and a declared length before reading; the
 * cap as soon as it is passed; the deadline while bytes still trickle) and stops reading at once, so a
 * client can never make the service buffer or drain more than the cap. The caller answers the refusal
 * and closes the connection.
 */
import type { IncomingMessage } from "node:http";
import { parse as parseContentType } from "content-type";

export interface BodyLimits {
  maxBytes: number;
  timeoutMs: number;
}

export type BodyRefusal = { status: 408 | 413 | 415; error: string; message: string };
export type BodyResult = { ok: true; body: Buffer } | ({ ok: false } & BodyRefusal);

const JSON_SUFFIX = /^application\/[a-z0-9!#$&^_.+-]+\+json$/;

/**
 * JSON media types: `application/json` and `application/<anything>+json`, with no charset or charset
 * UTF-8 (RFC 8259 JSON is UTF-8). A missing Content-Type is accepted: /decide reads only JSON, so there
 * is nothing to confuse it with, and sidecars and scripts often omit the header.
 */
function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return true;
  // The jshttp parser express uses (RFC 9110: type lower-cased, parameter names lower-cased, quotes removed).
  const { type, parameters } = parseContentType(header);
  if (type !== "application/json" && !JSON_SUFFIX.test(type)) return false;
  const charset = parameters.charset?.toLowerCase();
  return charset === undefined || charset === "utf-8" || charset === "utf8";
}

function refuse(status: BodyRefusal["status"], error: string, message: string): BodyResult {
  return { ok: false, status, error, message };
}

export function readBody(req: IncomingMessage, limits: BodyLimits): Promise<BodyResult> {
  const contentType = req.headers["content-type"];
  if (!isJsonContentType(contentType)) {
    return Promise.resolve(
      refuse(
        415,
        "unsupported_media_type",
        `content-type ${JSON.stringify(contentType!.slice(0, 100))}: /decide reads application/json`,
      ),
    );
  }
  const tooLarge = (): BodyResult => refuse(413, "payload_too_large", `body over ${limits.maxBytes} bytes`);
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limits.maxBytes) return Promise.resolve(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (result: BodyResult | Error): void => {
      clearTimeout(timer);
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("close", onClose);
      // Refused: read nothing more. The caller's answer closes the connection.
      if (!(result instanceof Error) && !result.ok) req.pause();
      if (result instanceof Error) reject(result);
      else resolve(result);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limits.maxBytes) return finish(tooLarge());
      chunks.push(chunk);
    };
    const onEnd = (): void => finish({ ok: true, body: Buffer.concat(chunks, size) });
    const onError = (err: Error): void => finish(err);
    const onClose = (): void => finish(new Error("the client closed the connection before the body ended"));
    const timer = setTimeout(
      () => finish(refuse(408, "body_timeout", `body not received within ${limits.timeoutMs} ms`)),
      limits.timeoutMs,
    );
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("close", onClose);
  });
}
