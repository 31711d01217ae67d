/**
 * Path normalisation before the policy, shared by every adapter (POST /decide, forward-auth, Envoy).
 * The rule it holds: Portier judges exactly the path the upstream receives, never a shortened or
 * re-spelled one, so anything that upstreams (nginx, Go net/http, Node, Tomcat/Spring, IIS) could read
 * differently is refused instead of guessed. Steps, in order:
 *   1. the raw value must be an RFC 9112 origin-form request-target: "/" path [ "?" query ], the path of
 *      RFC 3986 pchar and "/", the query of pchar, "/" and "?", every "%" followed by two hex digits. So no
 *      "#" (a request-target never has a fragment), no space, control, backslash or other ASCII character
 *      outside pchar; at most MAX_PATH_BYTES before the query. Raw non-ASCII characters stand for their
 *      UTF-8 percent-escapes (as Go and Tomcat read raw bytes; gateway headers arrive so, gateway-headers.ts);
 *      a lone UTF-16 surrogate is refused;
 *   2. refuse ";" (path parameters, which Tomcat and Spring strip from a segment);
 *   3. percent-decode the path once as UTF-8, refusing invalid UTF-8 and the encoded delimiters "/", "\",
 *      "?", "#", ";" and "%" (an upstream that decodes before routing, or twice, would see another path);
 *   4. refuse controls, format characters, line/paragraph separators, unassigned or private-use code
 *      points, and any space but U+0020;
 *   5. refuse "." and ".." segments, empty segments (one trailing slash is allowed: the policy ignores it),
 *      and segments ending in "." or starting or ending with a space (Windows/IIS drop them);
 *   6. refuse any character that Unicode NFKC maps to another (fullwidth "Ｏ", ligatures, superscripts,
 *      the Kelvin sign...), since an upstream that folds compatibility characters would read another name;
 *      then NFC, so "écoles" composed or decomposed is one string.
 * The query is validated (step 1) and then dropped: routes do not depend on it.
 * Case is kept: literal segments are compared case-insensitively by the policy, parameters keep their case.
 */

export type PathResult = { ok: true; path: string } | { ok: false; reason: "path_invalid"; message: string };

export const MAX_PATH_BYTES = 2048;

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** RFC 3986 pchar without pct-encoded: unreserved, sub-delims, ":" and "@"; the path adds "/". */
const PATH_CHAR = /[A-Za-z0-9\-._~!$&'()*+,;=:@/]/;
/** A whole valid target, to skip the character-by-character scan in the common case. */
const VALID_TARGET =
  /^\/(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})*(?:\?(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*)?$/;
/** Encoded bytes that would change the path's structure for an upstream that decodes before routing. */
const ENCODED_REFUSED: Record<number, string> = { 0x2f: "/", 0x5c: "\\", 0x3f: "?", 0x23: "#", 0x3b: ";", 0x25: "%" };
/**
 * After decoding: controls (C0, DEL, C1), format characters, separators, private use, unassigned, and any
 * space but U+0020.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}]|(?! )\p{Zs}/u;
/** The common case, which needs neither the Unicode checks nor NFC. */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

function invalid(message: string): PathResult {
  return { ok: false, reason: "path_invalid", message };
}

function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 65 && code <= 70) return code - 55;
  if (code >= 97 && code <= 102) return code - 87;
  return -1;
}

function codePoint(ch: string): string {
  return `U+${(ch.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, "0")}`;
}

/** Why a raw character cannot stand in a request-target. */
function rawCharProblem(ch: string, position: number): string {
  const at = `at position ${position}`;
  if (ch === "#") return `"#" ${at} is not allowed: a request-target has no fragment (RFC 9112 origin-form)`;
  if (ch === "\\") return `backslash ${at} is not allowed`;
  if (ch === " ") return `space ${at} is not allowed: percent-encode it`;
  if (/[\u0000-\u001f\u007f]/.test(ch)) return `control character ${at} is not allowed`;
  return `"${ch}" ${at} is not allowed in a request-target (RFC 3986): percent-encode it`;
}

/** Step 1: the first character that makes `raw` not an origin-form request-target, or undefined. */
function targetProblem(raw: string): string | undefined {
  if (VALID_TARGET.test(raw)) return undefined;
  if (!raw.startsWith("/")) return "path must start with / (origin-form request-target)";
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i] as string;
    if (ch === "%") {
      if (hexValue(raw.charCodeAt(i + 1)) < 0 || hexValue(raw.charCodeAt(i + 2)) < 0)
        return `malformed percent-escape at position ${i}`;
      i += 2;
    } else if (ch !== "?" && ch.charCodeAt(0) < 0x80 && !PATH_CHAR.test(ch)) {
      // "?" only ever appears in the query: the first one starts it.
      return rawCharProblem(ch, i);
    }
  }
  return undefined;
}

const encoder = new TextEncoder();

/** Step 3: decodes %XX escapes once; a raw non-ASCII character counts as its UTF-8 bytes. */
function percentDecode(path: string): { value: string } | { error: string } {
  if (!path.includes("%")) return { value: path };
  const bytes: number[] = [];
  for (let i = 0; i < path.length; i++) {
    const ch = path.charCodeAt(i);
    if (ch === 37 /* % */) {
      const byte = hexValue(path.charCodeAt(i + 1)) * 16 + hexValue(path.charCodeAt(i + 2));
      const refused = ENCODED_REFUSED[byte];
      if (refused !== undefined) return { error: `encoded "${refused}" at position ${i} is not allowed` };
      bytes.push(byte);
      i += 2;
    } else if (ch < 128) {
      bytes.push(ch);
    } else {
      const width = (path.codePointAt(i) as number) > 0xffff ? 2 : 1;
      for (const b of encoder.encode(path.slice(i, i + width))) bytes.push(b);
      i += width - 1;
    }
  }
  try {
    return { value: utf8.decode(Uint8Array.from(bytes)) };
  } catch {
    return { error: "percent-decoded bytes are not valid UTF-8" };
  }
}

/** Step 5: the first segment rule broken, or undefined. */
function segmentProblem(segments: string[]): string | undefined {
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i] as string;
    const which = `(segment ${i + 1})`;
    if (segment === "." || segment === "..") return `dot segment "${segment}" ${which} is not allowed`;
    if (segment === "") {
      if (segments.length === 1 || (i === segments.length - 1 && i > 0)) continue;
      return `empty segment ${which} is not allowed`;
    }
    if (segment.endsWith(".")) return `segment "${segment}" ${which} ends with "." (some servers drop it): not allowed`;
    if (segment.startsWith(" ") || segment.endsWith(" "))
      return `segment ${which} starts or ends with a space: not allowed`;
  }
  return undefined;
}

/**
 * Step 6, before NFC: the first character that Unicode compatibility (NFKC) maps to something else on
 * its own. Checked per character because NFC itself already turns some into ASCII (the Kelvin sign
 * U+212A into "K"), which a string-level NFKC-versus-NFC comparison would miss.
 */
function compatibilityProblem(decoded: string): string | undefined {
  for (const ch of decoded) {
    if (ch.charCodeAt(0) < 0x80) continue; // ASCII is its own NFKC
    const folded = ch.normalize("NFKC");
    if (folded !== ch)
      return `compatibility character "${ch}" (${codePoint(ch)}) reads as "${folded}" under NFKC: not allowed`;
  }
  return undefined;
}

export function normalisePath(raw: string): PathResult {
  if (typeof raw !== "string") return invalid("path must be a string");
  const query = raw.indexOf("?");
  const path = query === -1 ? raw : raw.slice(0, query);
  if (Buffer.byteLength(path, "utf8") > MAX_PATH_BYTES) return invalid(`path is longer than ${MAX_PATH_BYTES} bytes`);
  const surrogate = raw.search(/\p{Cs}/u);
  if (surrogate !== -1) return invalid(`lone UTF-16 surrogate at position ${surrogate} is not allowed`);
  const problem = targetProblem(raw);
  if (problem !== undefined) return invalid(problem);
  const semicolon = path.indexOf(";");
  if (semicolon !== -1)
    return invalid(`";" at position ${semicolon} is not allowed: path parameters are stripped by some servers`);

  const decoded = percentDecode(path);
  if ("error" in decoded) return invalid(decoded.error);
  const plain = PRINTABLE_ASCII.test(decoded.value);
  const hidden = plain ? -1 : decoded.value.search(INVISIBLE);
  if (hidden !== -1) {
    const ch = String.fromCodePoint(decoded.value.codePointAt(hidden) as number);
    return invalid(
      `control or invisible character ${codePoint(ch)} (encoded) at decoded position ${hidden} is not allowed`,
    );
  }
  const segmentError = segmentProblem(decoded.value.split("/").slice(1));
  if (segmentError !== undefined) return invalid(segmentError);

  const compatibility = plain ? undefined : compatibilityProblem(decoded.value);
  if (compatibility !== undefined) return invalid(compatibility);
  return { ok: true, path: plain ? decoded.value : decoded.value.normalize("NFC") };
}
