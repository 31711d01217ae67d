/**
 * Path normalisation before the policy, shared by every adapter (POST /decide, forward-auth, Envoy).
 * Steps, in order:
 *   1. strip the query and fragment (at the first raw "?" or "#");
 *   2. require an origin-form path ("/..."), at most MAX_PATH_BYTES;
 *   3. refuse a raw backslash or control character;
 *   4. percent-decode once as UTF-8, refusing bad escapes, invalid UTF-8, encoded "/" or "\",
 *      and NUL or control characters after decoding;
 *   5. refuse "." and ".." segments and empty segments (one trailing slash is allowed: the policy ignores it);
 *   6. Unicode NFC, so "écoles" composed or decomposed is one string.
 * Case is kept: literal segments are compared case-insensitively by the policy, parameters keep their case.
 */

export type PathResult = { ok: true; path: string } | { ok: false; reason: "path_invalid"; message: string };

export const MAX_PATH_BYTES = 2048;

const utf8 = new TextDecoder("utf-8", { fatal: true });
// C0 controls, DEL and C1 controls.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

function invalid(message: string): PathResult {
  return { ok: false, reason: "path_invalid", message };
}

function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 65 && code <= 70) return code - 55;
  if (code >= 97 && code <= 102) return code - 87;
  return -1;
}

/** Decodes %XX escapes once; returns null (with the position) on a malformed escape or invalid UTF-8. */
function percentDecode(raw: string): { value: string } | { error: string } {
  if (!raw.includes("%")) return { value: raw };
  const bytes: number[] = [];
  const encoder = new TextEncoder();
  for (let i = 0; i < raw.length; i++) {
    const ch = raw.charCodeAt(i);
    if (ch === 37 /* % */) {
      const hi = hexValue(raw.charCodeAt(i + 1));
      const lo = hexValue(raw.charCodeAt(i + 2));
      if (hi < 0 || lo < 0) return { error: `malformed percent-escape at position ${i}` };
      const byte = hi * 16 + lo;
      if (byte === 0x2f || byte === 0x5c) return { error: `encoded "${byte === 0x2f ? "/" : "\\"}" at position ${i} is not allowed` };
      bytes.push(byte);
      i += 2;
    } else if (ch < 128) {
      bytes.push(ch);
    } else {
      // Raw non-ASCII characters (as some clients send them) are kept as their UTF-8 bytes.
      const cp = raw.codePointAt(i) as number;
      const width = cp > 0xffff ? 2 : 1;
      for (const b of encoder.encode(raw.slice(i, i + width))) bytes.push(b);
      i += width - 1;
    }
  }
  try {
    return { value: utf8.decode(Uint8Array.from(bytes)) };
  } catch {
    return { error: "percent-decoded bytes are not valid UTF-8" };
  }
}

export function normalisePath(raw: string): PathResult {
  if (typeof raw !== "string") return invalid("path must be a string");
  const cut = raw.search(/[?#]/);
  const path = cut === -1 ? raw : raw.slice(0, cut);
  if (!path.startsWith("/")) return invalid("path must start with /");
  if (Buffer.byteLength(path, "utf8") > MAX_PATH_BYTES) return invalid(`path is longer than ${MAX_PATH_BYTES} bytes`);
  if (path.includes("\\")) return invalid(`backslash at position ${path.indexOf("\\")} is not allowed`);
  const rawControl = path.search(CONTROL);
  if (rawControl !== -1) return invalid(`control character at position ${rawControl} is not allowed`);

  const decoded = percentDecode(path);
  if ("error" in decoded) return invalid(decoded.error);
  const control = decoded.value.search(CONTROL);
  if (control !== -1) return invalid(`control character (encoded) at decoded position ${control} is not allowed`);

  const segments = decoded.value.split("/").slice(1);
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i];
    if (segment === "." || segment === "..") return invalid(`dot segment "${segment}" (segment ${i + 1}) is not allowed`);
    if (segment === "" && !(i === segments.length - 1 && segments.length > 1) && segments.length !== 1) {
      return invalid(`empty segment (segment ${i + 1}) is not allowed`);
    }
  }
  return { ok: true, path: decoded.value.normalize("NFC") };
}
