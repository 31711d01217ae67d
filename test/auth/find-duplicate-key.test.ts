/**
 * findDuplicateKey: the member name seen twice in one object, whatever the spelling (escapes), and
 * nothing for names repeated only across objects, inside strings or in arrays.
 */
import { describe, expect, it } from "vitest";
import { findDuplicateKey } from "../../src/auth/index.js";

describe("findDuplicateKey", () => {
  it.each([
    ["flat duplicate", '{"a":1,"b":2,"a":3}', "a"],
    ["escaped spelling of the same name", '{"aud":"x","\\u0061ud":"y"}', "aud"],
    ["escaped quote inside the name", '{"a\\"b":1,"a\\"b":2}', 'a"b'],
    ["name ending in an escaped backslash", '{"a\\\\":1,"a\\\\":2}', "a\\"],
    ["nested object", '{"o":{"k":1,"k":2}}', "k"],
    ["object inside an array", '{"l":[{"k":1},{"k":1,"k":2}]}', "k"],
    ["with whitespace", '{ "a" : 1 ,\n "a" : 2 }', "a"],
  ])("%s -> %s", (_n, json, name) => {
    expect(findDuplicateKey(json)).toBe(name);
  });

  it.each([
    ["distinct names", '{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}'],
    ["a value that spells a name", '{"a":"a","b":"\\"a\\":1,"}'],
    ["escaped backslash before the closing quote", '{"a":"x\\\\","b":"a"}'],
    ["a name that differs only by an escape", '{"a\\"":1,"a":2}'],
    ["strings in arrays", '{"l":["a","a"]}'],
    ["not JSON (unterminated string)", '{"a":"x'],
  ])("%s -> none", (_n, json) => {
    expect(findDuplicateKey(json)).toBeUndefined();
  });
});
