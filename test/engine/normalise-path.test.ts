import { describe, expect, it } from "vitest";
import { normalisePath, MAX_PATH_BYTES } from "../../src/engine/index.js";

const ok: [string, string][] = [
  ["/v1/roles", "/v1/roles"],
  ["/v1/roles?x=1&y=2", "/v1/roles"],
  ["/v1/roles#frag", "/v1/roles"],
  ["/v1/roles/", "/v1/roles/"],
  ["/", "/"],
  ["/v2/ORG001/%C3%A9coles", "/v2/ORG001/écoles"],
  ["/v2/ORG001/e%CC%81coles", "/v2/ORG001/écoles"],
  ["/v2/ORG001/e\u0301coles", "/v2/ORG001/écoles"],
  ["/v2/ORG001/b%C3%A2timents", "/v2/ORG001/bâtiments"],
  ["/v2/ORG001/elevesAdultes/1/pre%CC%81sences", "/v2/ORG001/elevesAdultes/1/présences"],
  ["/v2/ORG%20001", "/v2/ORG 001"],
  ["/v2/a%253Fb", "/v2/a%3Fb"], // decoded once only
  ["/v2/a+b", "/v2/a+b"],
  ["/v2/%3F", "/v2/?"],
];

const refused: [string, RegExp][] = [
  ["", /start with \//],
  ["v1/roles", /start with \//],
  ["http://evil/v1/roles", /start with \//],
  ["/v1/..", /dot segment/],
  ["/v1/./roles", /dot segment/],
  ["/v1/%2e%2e/roles", /dot segment/],
  ["/v1/%2E/roles", /dot segment/],
  ["/v1//roles", /empty segment/],
  ["//v1/roles", /empty segment/],
  ["/v1/roles//", /empty segment/],
  ["/v1%2froles", /encoded "\/"/],
  ["/v1%2Froles", /encoded "\/"/],
  ["/v1%5croles", /encoded "\\"/],
  ["/v1\\roles", /backslash/],
  ["/v1/roles%00", /control character/],
  ["/v1/roles%0a", /control character/],
  ["/v1/ro\u0007les", /control character/],
  ["/v1/%zz", /malformed percent-escape at position 4/],
  ["/v1/%4", /malformed percent-escape/],
  ["/v1/%C3", /not valid UTF-8/],
  ["/v1/%C3%28", /not valid UTF-8/],
  ["/v1/%ED%A0%80", /not valid UTF-8/], // an encoded UTF-16 surrogate
  ["/v1/%C2%85", /control character/], // C1 control (NEL)
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
