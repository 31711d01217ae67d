/**
 * jsonFaultOffset: where a JSON text first goes wrong, by scanning it against JSON's grammar (no error message
 * read). A table of malformed texts with the offset of their fault; valid texts have none; and over generated
 * corruptions of directory records, every offset the Node running the tests names in its message is ours too.
 */
import { describe, expect, it } from "vitest";
import { jsonFault } from "../../src/directory/json-fault.js";
import { seededRandom } from "../support/random.js";

const CASES: [string, string, number][] = [
  ["a bare word where a member name goes", "{oops}", 1],
  ["two array elements without a comma", "[1 2]", 3],
  ["a comma where a value goes", "[,]", 1],
  ["a member without its colon", '{"a" 1}', 5],
  ["a misspelt literal", '{"a":tru}', 8],
  ["a bad escape", '"ab\\x"', 4],
  ["a bad unicode escape", '"\\u12G4"', 5],
  ["a leading zero", "01", 1],
  ["a fraction without digits", "1.", 2],
  ["a minus alone", "-", 1],
  ["an exponent without digits", "1e+", 3],
  ["a trailing comma in an array", "[1,]", 3],
  ["a trailing comma in an object", '{"a":1,}', 7],
  ["a control character in a string", '"a\u0001"', 2],
  ["content after the value", '{"a":1} x', 8],
  ["an empty text", "", 0],
  ["an unclosed object", "{", 1],
  ["an unclosed array", "[", 1],
  ["an unclosed string", '"abc', 4],
  ["a truncated literal", "nul", 3],
  ["a bracket closing the wrong container", '{"a":[1,{"b":2]}', 14],
  ["a single-quoted string", "{'a':1}", 1],
  ["a record on several lines, its fault on the third", '{"sub":"a",\n"tenant_id":"t",\n"roles":[1 2]}', 40],
  ["deep nesting, unclosed", "[".repeat(100_000), 100_000],
];

describe("jsonFaultOffset", () => {
  it.each(CASES)("%s", (_why, text, offset) => {
    expect(() => void JSON.parse(text)).toThrow(SyntaxError);
    expect(jsonFault(text)?.offset).toBe(offset);
  });

  it.each([
    ["a directory record", '{"sub":"a","tenant_id":"t","roles":["Enseignant jeune"]}'],
    ["every kind of value", ' [1, -0.5e+3, true, false, null, "\\u00e9\\n", {}, []] '],
    ["every escape", '"\\"\\\\\\/\\b\\f\\n\\r\\t"'],
    ["deep nesting", "[".repeat(50_000) + "]".repeat(50_000)],
  ])("valid JSON has no fault: %s", (_why, text) => {
    expect(() => void JSON.parse(text)).not.toThrow();
    expect(jsonFault(text)?.offset).toBeUndefined();
  });

  // The words are ours (V8's, as Node 24 spells them, without its position or its copy of the text).
  it.each([
    ["{oops}", "Expected property name or '}'"],
    ['{"a":1,}', "Expected double-quoted property name"],
    ['{"a" 1}', "Expected ':' after property name"],
    ["[1 2]", "Expected ',' or ']' after array element"],
    ['{"a":[1,{"b":2]}', "Expected ',' or '}' after property value"],
    ['{"a":1} x', "Unexpected non-whitespace character after JSON"],
    ["[,]", "Unexpected token ','"],
    ['{"a":tru}', "Unexpected token '}'"],
    ["[\u0001]", "Unexpected token '\\u0001'"],
    ['"ab\\x"', "Bad escaped character"],
    ['"\\u12G4"', "Bad Unicode escape"],
    ['"a\u0001"', "Bad control character in string literal"],
    ['"abc', "Unterminated string"],
    ["[01]", "Unexpected number"],
    ["1.", "Unterminated fractional number"],
    ["[-]", "No number after minus sign"],
    ["1e+", "Exponent part is missing a number"],
    ["[", "Unexpected end of JSON input"],
    ["nul", "Unexpected end of JSON input"],
    ["{", "Expected property name or '}'"],
  ])("names the fault of %j: %s", (text, why) => {
    expect(() => void JSON.parse(text)).toThrow(SyntaxError);
    expect(jsonFault(text)?.why).toBe(why);
  });

  it("agrees with every position JSON.parse names, over 2,000 corrupted directory records", () => {
    const random = seededRandom(26);
    const record = JSON.stringify({
      sub: "00000000-0000-4000-8000-000000000001",
      tenant_id: "0a1b2c3d",
      roles: ["Enseignant jeune", "Directeur jeune"],
      n: -12.5e3,
      ok: true,
      none: null,
    });
    const junk = ['"', "{", "}", "[", "]", ",", ":", "\\", "x", "1", "-", ".", "e", " ", "\u0001", "t", "n"];
    let named = 0;
    for (let round = 0; round < 2000; round++) {
      const chars = [...record];
      const edits = 1 + Math.floor(random() * 3);
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(random() * chars.length);
        const what = random();
        if (what < 0.4) chars.splice(at, 1);
        else if (what < 0.7) chars.splice(at, 0, junk[Math.floor(random() * junk.length)]!);
        else chars[at] = junk[Math.floor(random() * junk.length)]!;
      }
      const text = chars.join("");
      let message: string | undefined;
      try {
        JSON.parse(text);
      } catch (err) {
        message = (err as Error).message;
      }
      if (message === undefined) {
        expect(jsonFault(text)?.offset, text).toBeUndefined();
        continue;
      }
      const fault = jsonFault(text)?.offset;
      expect(fault, text).toBeDefined();
      const position = / at position (\d+)/.exec(message);
      if (position) {
        named++;
        expect(fault, `${text}: ${message}`).toBe(Number(position[1]));
      } else if (/end of JSON input/.test(message)) expect(fault, text).toBe(text.length);
    }
    // The cross-check only means something when the messages name positions (Node 20 names most).
    expect(named).toBeGreaterThan(500);
  });
});
