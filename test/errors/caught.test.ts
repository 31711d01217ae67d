/**
 * messageOf / codeOf: what a catch clause reads of any thrown value.
 */
import { describe, expect, it } from "vitest";
import { codeOf, messageOf } from "../../src/errors/caught.js";

const enoent = Object.assign(new Error("no such file"), { code: "ENOENT" });

describe("caught values", () => {
  it.each([
    ["an Error", new Error("boom"), "boom", undefined],
    ["a system error", enoent, "no such file", "ENOENT"],
    ["a string", "plain text", "plain text", undefined],
    ["null", null, "null", undefined],
    ["undefined", undefined, "undefined", undefined],
    ["an object with a numeric code", { code: 42 }, "[object Object]", undefined],
    ["an object with a string code", { code: "EACCES" }, "[object Object]", "EACCES"],
  ])("%s", (_name, value, message, code) => {
    expect(messageOf(value)).toBe(message);
    expect(codeOf(value)).toBe(code);
  });
});
