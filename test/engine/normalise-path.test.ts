import { describe, expect, it } from "vitest";
import { normalisePath, MAX_PATH_BYTES } from "../../src/engine/index.js";

const ok: [string, string][] = [
  ["/v1/roles", "/v1/roles"],
  ["/v1/roles?x=1&y=2", "/v1/roles"],
  ["/v1/roles?next=/a?b", "/v1/roles"], // "/" and "?" are allowed in a query
  ["/v1/roles?q=%C3%A9%23", "/v1/roles"], // the query may carry escapes of anything
  ["/v1/roles/", "/v1/roles/"],
  ["/", "/"],
  ["/v2/ORG001/%C3%A9coles", "/v2/ORG001/écoles"],
  ["/v2/ORG001/e%CC%81coles", "/v2/ORG001/écoles"],
  ["/v2/ORG001/b%C3%A2timents", "/v2/ORG001/bâtiments"],
  // Raw non-ASCII stands for its UTF-8 escapes (gateway headers turn raw bytes into escapes before this).
  ["/v2/ORG001/écoles", "/v2/ORG001/écoles"],
  ["/v2/ORG001/e\u0301coles", "/v2/ORG001/écoles"],
  ["/v2/ORG001/%C3%A9coles/\u{1F600}", "/v2/ORG001/écoles/\u{1F600}"],
  ["/v2/ORG001/elevesAdultes/1/pre%CC%81sences", "/v2/ORG001/elevesAdultes/1/présences"],
  ["/v2/ORG%20001", "/v2/ORG 001"],
  ["/v2/%4FRG001", "/v2/ORG001"], // an escaped unreserved character is that character
  ["/v2/a+b", "/v2/a+b"],
  ["/v2/a.b/.c/~d", "/v2/a.b/.c/~d"],
  ["/v2/a!$&'()*,=:@b", "/v2/a!$&'()*,=:@b"], // the rest of pchar
];

const refused: [string, RegExp][] = [
  ["", /start with \//],
  ["v1/roles", /start with \//],
  ["*", /start with \//],
  ["http://evil/v1/roles", /start with \//],
  // Not an origin-form request-target (issue 9, item 2): a fragment, and every raw character outside pchar.
  ["/v1/roles#/../../admin/secret.txt", /"#" at position 9 is not allowed: a request-target has no fragment/],
  ["/v1/roles#frag", /"#" at position 9/],
  ["/v1/roles?a=1#frag", /"#" at position 13/],
  ["/v1/ro les", /space at position 6/],
  ["/v1/roles?a=b c", /space at position 13/],
  ...[...'<>"{}|^`[]'].map((ch): [string, RegExp] => [
    `/v1/a${ch}b`,
    new RegExp(`"\\${ch}" at position 5 is not allowed in a request-target`),
  ]),
  ["/v1/roles?a[0]=1", /"\[" at position 11/],
  ["/v1\\roles", /backslash at position 3/],
  ["/v1/ro\u0007les", /control character at position 6/],
  ["/v1/ro\tles", /control character at position 6/],
  ["/v2/ORG001/\ud800coles", /lone UTF-16 surrogate at position 11/],
  ["/v2/\uff2fRG002/centres", /compatibility character "Ｏ"/], // raw, as a /decide body may carry it
  ["/v2/ORG\u00a0002", /control or invisible character U\+00A0/],
  ["/v1/%zz", /malformed percent-escape at position 4/],
  ["/v1/%4", /malformed percent-escape/],
  ["/v1/a%", /malformed percent-escape at position 5/],
  ["/v1/roles?x=%", /malformed percent-escape at position 12/],
  // Path parameters (Tomcat and Spring strip ";..." from a segment), raw or encoded.
  ["/v2/ORG002;x/centres", /";" at position 10 is not allowed: path parameters/],
  ["/v2/ORG002/..;/ORG001/centres", /";" at position/],
  ["/v2/ORG002%3Bx/centres", /encoded ";" at position 10/],
  // Encoded delimiters: an upstream that decodes before routing, or decodes twice, would see another path.
  ["/v1%2froles", /encoded "\/"/],
  ["/v1%2Froles", /encoded "\/"/],
  ["/v1%5croles", /encoded "\\"/],
  ["/v1/roles%23/../../admin", /encoded "#" at position 9/],
  ["/v1/roles%3Fx", /encoded "\?"/],
  ["/v2/a%253Fb", /encoded "%"/],
  ["/v2/a%252Fb", /encoded "%"/],
  // Decoding.
  ["/v1/%C3", /not valid UTF-8/],
  ["/v1/%C3%28", /not valid UTF-8/],
  ["/v1/%FF", /not valid UTF-8/],
  ["/v1/%ED%A0%80", /not valid UTF-8/], // an encoded UTF-16 surrogate
  ["/v1/%C0%AF", /not valid UTF-8/], // an overlong "/"
  ["/v1/%C0%AE%C0%AE/admin", /not valid UTF-8/], // an overlong ".."
  ["/v1/roles%00", /control or invisible character U\+0000/],
  ["/v1/roles%0a", /control or invisible character U\+000A/],
  ["/v1/%C2%85", /control or invisible character U\+0085/], // C1 control (NEL)
  ["/v2/ORG0%E2%80%8B02", /control or invisible character U\+200B/], // zero-width space
  ["/v2/ORG002%EF%BB%BF", /control or invisible character U\+FEFF/], // byte-order mark
  ["/v2/ORG%C2%A0002", /control or invisible character U\+00A0/], // no-break space
  ["/v2/ORG002%E2%80%A8", /control or invisible character U\+2028/], // line separator
  ["/v2/%EE%80%80", /control or invisible character U\+E000/], // private use
  // Segments.
  ["/v1/..", /dot segment/],
  ["/v1/./roles", /dot segment/],
  ["/v1/%2e%2e/roles", /dot segment/],
  ["/v1/%2E/roles", /dot segment/],
  ["/v1//roles", /empty segment/],
  ["//v1/roles", /empty segment/],
  ["/v1/roles//", /empty segment/],
  ["/v2/ORG002./centres", /segment "ORG002\." \(segment 2\) ends with "\."/],
  ["/v2/ORG002%2E/centres", /ends with "\."/],
  ["/v2/ORG002.../centres", /ends with "\."/],
  ["/v2/ORG002%20/centres", /starts or ends with a space/],
  ["/v2/%20ORG002/centres", /starts or ends with a space/],
  // Compatibility characters (NFKC): fullwidth, ligatures, superscripts, the Kelvin sign.
  ["/v2/%EF%BC%AFRG002/centres", /compatibility character "Ｏ" \(U\+FF2F\) reads as "O" under NFKC/],
  ["/v2/ORG%EF%BC%90%EF%BC%90%EF%BC%92", /compatibility character "０"/],
  ["/v2/ORG001/%EF%AC%81chiers", /compatibility character "ﬁ"/],
  ["/v2/ORG%C2%B9", /compatibility character "¹"/],
  ["/v2/%E2%84%AAORG", /compatibility character "\u212a" \(U\+212A\) reads as "K"/],
  ["/v2/%E2%84%A6", /compatibility character "\u2126" \(U\+2126\)/], // Ohm sign: NFC alone would make it omega
  ["/" + "a".repeat(MAX_PATH_BYTES), /longer than/],
];

describe("normalisePath", () => {
  it.each(ok)("accepts %j as %j", (raw, expected) => {
    expect(normalisePath(raw)).toEqual({ ok: true, path: expected });
  });

  it.each(refused)("refuses %j", (raw, message) => {
    const result = normalisePath(raw);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.reason).toBe("path_invalid");
      expect(result.message).toMatch(message);
    }
  });

  it("gives one string for composed and decomposed forms", () => {
    const a = normalisePath("/v2/X/%C3%A9coles");
    const b = normalisePath("/v2/X/e%CC%81coles");
    expect(a).toEqual(b);
  });
});

// Issue 17 item 9: the limit is MAX_PATH_BYTES UTF-8 bytes before the query, inclusive. Each row is at the edge.
describe("the path length limit", () => {
  const ascii = (bytes: number) => "/" + "a".repeat(bytes - 1);
  /** Raw "é" (2 bytes, 1 unit) up to `bytes`, padded with one ASCII byte when odd. */
  const accented = (bytes: number) => "/" + "é".repeat(Math.floor((bytes - 1) / 2)) + "a".repeat((bytes - 1) % 2);
  it.each([
    { why: "ASCII, exactly the limit", path: ascii(MAX_PATH_BYTES), ok: true },
    { why: "ASCII, one byte more", path: ascii(MAX_PATH_BYTES + 1), ok: false },
    { why: "2-byte characters, exactly the limit", path: accented(MAX_PATH_BYTES), ok: true },
    { why: "2-byte characters, one byte more", path: accented(MAX_PATH_BYTES + 1), ok: false },
    {
      why: "exactly the limit, then a long query (not counted)",
      path: `${ascii(MAX_PATH_BYTES)}?q=${"b".repeat(4000)}`,
      ok: true,
    },
  ])("$why", ({ path, ok }) => {
    const bytes = Buffer.byteLength(path.split("?")[0]!, "utf8");
    expect(bytes).toBe(ok ? MAX_PATH_BYTES : MAX_PATH_BYTES + 1);
    const result = normalisePath(path);
    expect(result.ok, JSON.stringify(result).slice(0, 200)).toBe(ok);
    if (!result.ok) expect(result.message).toBe(`path is longer than ${MAX_PATH_BYTES} bytes`);
  });
});
