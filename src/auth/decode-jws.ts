/**
 * Splits and decodes a compact JWS without trusting it: size cap first, exactly three base64url
 * segments, JSON objects without duplicate member names, and the header checks that need no key
 * (alg allow-list, crit). Signature verification happens later, with a key we chose ourselves.
 */
import { TokenError } from "./token-error.js";
import { findDuplicateKey } from "./find-duplicate-key.js";

export interface DecodedJws {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  alg: string;
  kid: string | undefined;
}

const B64URL = /^[A-Za-z0-9_-]*$/;

function decodeSegment(segment: string, what: string): Record<string, unknown> {
  if (segment.length === 0 || !B64URL.test(segment) || segment.length % 4 === 1) {
    throw new TokenError("token_malformed", `the ${what} is not base64url`);
  }
  const text = Buffer.from(segment, "base64url").toString("utf8");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new TokenError("token_malformed", `the ${what} is not JSON`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new TokenError("token_malformed", `the ${what} is not a JSON object`);
  }
  const dup = findDuplicateKey(text);
  if (dup !== undefined) {
    throw new TokenError(what === "header" ? "token_malformed" : "claims_invalid", `the ${what} names a member twice`);
  }
  return value as Record<string, unknown>;
}

export function decodeJws(token: unknown, maxTokenBytes: number, algorithms: ReadonlySet<string>): DecodedJws {
  if (typeof token !== "string" || token.length === 0) throw new TokenError("token_missing", "no token was presented");
  if (token.length > maxTokenBytes || Buffer.byteLength(token, "utf8") > maxTokenBytes) {
    throw new TokenError("token_too_large", `the token is larger than ${maxTokenBytes} bytes`);
  }
  const parts = token.split(".");
  if (parts.length !== 3) throw new TokenError("token_malformed", `the token has ${parts.length} segments, not 3`);
  const header = decodeSegment(parts[0]!, "header");
  const alg = header.alg;
  if (typeof alg !== "string" || alg.length === 0) throw new TokenError("token_malformed", "the header has no alg");
  const lower = alg.toLowerCase();
  if (lower === "none" || lower.startsWith("hs") || !algorithms.has(alg)) {
    throw new TokenError("alg_not_allowed", `algorithm ${JSON.stringify(alg.slice(0, 20))} is not allowed`);
  }
  if (header.crit !== undefined) {
    // No extension is understood here, so any crit entry is one we cannot honour (RFC 7515 4.1.11).
    throw new TokenError("crit_unsupported", "the header marks extensions critical that are not supported");
  }
  const kid = header.kid;
  if (kid !== undefined && typeof kid !== "string") throw new TokenError("token_malformed", "the header kid is not a string");
  const payload = decodeSegment(parts[1]!, "payload");
  const sig = parts[2]!;
  if (sig.length === 0 || !B64URL.test(sig) || sig.length % 4 === 1) {
    throw new TokenError("signature_invalid", "the signature is missing or not base64url");
  }
  return { header, payload, alg, kid };
}
