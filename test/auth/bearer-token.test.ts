/**
 * bearerToken: the one reading of `Authorization: Bearer <token>` shared by the service and the issuer.
 */
import { describe, expect, it } from "vitest";
import { bearerToken } from "../../src/auth/index.js";

describe("bearerToken", () => {
  it.each([
    ["absent", undefined, {}],
    ["Bearer and a token", "Bearer a.b.c", { token: "a.b.c" }],
    ["scheme in any case, more spaces, trailing space", "bEaReR   a.b.c ", { token: "a.b.c" }],
    ["another scheme", "Basic dXNlcjpwdw==", { invalid: true }],
    ["no token", "Bearer ", { invalid: true }],
    ["two tokens", "Bearer a b", { invalid: true }],
    ["no space after the scheme", "Bearera.b.c", { invalid: true }],
    ["sent twice", ["Bearer a", "Bearer b"], { invalid: true }],
  ] as const)("%s", (_n, header, expected) => {
    expect(bearerToken(header as string | string[] | undefined)).toEqual(expected);
  });
});
