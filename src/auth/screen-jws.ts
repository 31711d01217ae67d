/**
 * What Portier checks in a compact JWS before jose sees it, because jose does not: the size cap, exactly
 * three base64url segments, and no member name twice in the header or the claims (JSON.parse keeps the
 * last one silently, which lets a token say two things at once). Also the cold-path explanation of a
 * refusal jose only calls "invalid", so the caller learns which part is wrong.
 */
import { TokenError } from "./token-error.js";
import { findDuplicateKey } from "./find-duplicate-key.js";

const B64URL = /^[A-Za-z0-9_-]*$/;

export function isBase64url(segment: string): boolean {
  return B64URL.test(segment) && segment.length % 4 !== 1;
}

function segmentText(segment: string, what: "header" | "payload"): string {
  if (segment.length === 0 || !isBase64url(segment))
    throw new TokenError("token_malformed", `the ${what} is not base64url`);
  return Buffer.from(segment, "base64url").toString("utf8");
}

/** Throws the TokenError for the first problem found; the segments are then left to jose. */
export function screenJws(token: unknown, maxTokenBytes: number): asserts token is string {
  if (typeof token !== "string" || token.length === 0) throw new TokenError("token_missing", "no token was presented");
  // A UTF-16 unit is at most 3 UTF-8 bytes, so the byte count is needed only near the cap.
  if (
    token.length > maxTokenBytes ||
    (token.length * 3 > maxTokenBytes && Buffer.byteLength(token, "utf8") > maxTokenBytes)
  ) {
    throw new TokenError("token_too_large", `the token is larger than ${maxTokenBytes} bytes`);
  }
  const dot1 = token.indexOf(".");
  const dot2 = dot1 < 0 ? -1 : token.indexOf(".", dot1 + 1);
  if (dot2 < 0 || token.includes(".", dot2 + 1))
    throw new TokenError("token_malformed", `the token has ${token.split(".").length} segments, not 3`);
  const header = segmentText(token.slice(0, dot1), "header");
  const payload = segmentText(token.slice(dot1 + 1, dot2), "payload");
  if (findDuplicateKey(header) !== undefined)
    throw new TokenError("token_malformed", "the header names a member twice");
  if (findDuplicateKey(payload) !== undefined)
    throw new TokenError("claims_invalid", "the payload names a member twice");
}

function parseObject(segment: string, what: "header" | "payload"): Record<string, unknown> | TokenError {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(segment, "base64url").toString("utf8"));
  } catch {
    return new TokenError("token_malformed", `the ${what} is not JSON`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return new TokenError("token_malformed", `the ${what} is not a JSON object`);
  return value as Record<string, unknown>;
}

/** The protected header of a screened token, or undefined when it is not a JSON object (cold path only). */
export function peekHeader(token: string): Record<string, unknown> | undefined {
  const header = parseObject(token.split(".")[0] ?? "", "header");
  return header instanceof TokenError ? undefined : header;
}

/**
 * Why jose found a screened token malformed, in jose's own order (header JSON, crit, alg, claims JSON);
 * undefined when none of these is the reason.
 */
export function explainMalformed(token: string): TokenError | undefined {
  const [h = "", p = ""] = token.split(".");
  const header = parseObject(h, "header");
  if (header instanceof TokenError) return header;
  if (header.crit !== undefined) return critUnsupported();
  if (typeof header.alg !== "string" || header.alg.length === 0)
    return new TokenError("token_malformed", "the header has no alg");
  const payload = parseObject(p, "payload");
  return payload instanceof TokenError ? payload : undefined;
}

/** No extension is understood here, so any crit entry is one we cannot honour (RFC 7515 4.1.11). */
export function critUnsupported(): TokenError {
  return new TokenError("crit_unsupported", "the header marks extensions critical that are not supported");
}
