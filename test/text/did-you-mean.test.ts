/**
 * "Did you mean" (src/text/did-you-mean.ts), as the CLI's argument parser and the service's configuration use
 * it: the edit distance, case-insensitive, and a suggestion only for a likely typo.
 */
import { describe, expect, it } from "vitest";
import { editDistance, nearestName } from "../../src/text/did-you-mean.js";

describe("did you mean", () => {
  it.each([
    ["roleCheck", "RoleCheck", 0],
    ["roleCheck", "roleChek", 1],
    ["directory", "directroy", 2],
    ["maxBodyBytes", "maxBodyByte", 1],
  ])("editDistance(%s, %s) = %i, case-insensitive", (a, b, d) => expect(editDistance(a, b)).toBe(d));

  it("nearestName suggests only likely typos", () => {
    expect(nearestName("workerz", ["workers", "watch"])).toBe("workers");
    expect(nearestName("colour", ["issuer", "bundle", "workers"])).toBeUndefined();
  });
});
