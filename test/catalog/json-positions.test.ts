/**
 * Our JSON scan (src/catalog/json-positions.ts): the line and column of the first syntax error in one line of
 * words (V8's JSON.parse names no position for most errors and quotes the text across lines), the line of each
 * value by its field path, and a data error at the line of the entry it is about.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { jsonSyntaxProblem, jsonValueLines } from "../../src/catalog/json-positions.js";
import { DataError, loadCatalog } from "../../src/catalog/index.js";
import { scratchProject } from "../support/cli.js";

describe("jsonSyntaxProblem", () => {
  const cases: [string, string, { line: number; column: number; problem: string } | undefined][] = [
    ["valid", '{"a": [1, -2.5e3, "x\\u00e9", true, null]}', undefined],
    [
      "a trailing comma in a list",
      '{\n  "a": ["t_adulte",]\n}',
      { line: 2, column: 20, problem: `unexpected "]" where a value was expected` },
    ],
    [
      "a trailing comma in an object",
      '{"a": 1,\n}',
      { line: 2, column: 1, problem: `unexpected "}" where a field name in double quotes was expected` },
    ],
    ["a missing comma", "[1\n 2]", { line: 2, column: 2, problem: `unexpected "2" where ',' or ']' was expected` }],
    [
      "a text cut short",
      '{"a": [1, 2',
      { line: 1, column: 12, problem: "the text ends early (where ',' or ']' was expected)" },
    ],
    [
      "a single quote",
      "{'a': 1}",
      { line: 1, column: 2, problem: `unexpected "'" where a field name in double quotes was expected` },
    ],
    [
      "a raw tab in a string",
      '["a\tb"]',
      { line: 1, column: 4, problem: `unexpected "\\t" inside a string (a control character must be escaped)` },
    ],
    ["a bad escape", '["\\x"]', { line: 1, column: 4, problem: `unexpected "x" after '\\' in a string` }],
    [
      "text after the document",
      "{}\n{}",
      { line: 2, column: 1, problem: `unexpected "{" after the end of the document` },
    ],
    ["a leading zero", "[01]", { line: 1, column: 3, problem: `unexpected "1" where ',' or ']' was expected` }],
  ];
  it.each(cases)("%s", (_, text, expected) => {
    expect(jsonSyntaxProblem(text)).toEqual(expected);
    // The scan and JSON.parse agree on what is JSON.
    const parse = () => void JSON.parse(text);
    if (expected) expect(parse).toThrow();
    else expect(parse).not.toThrow();
  });
});

describe("jsonValueLines", () => {
  it("gives each value's line by its field path", () => {
    const lines = jsonValueLines(
      '{\n  "routes": [\n    {\n      "template": "/a",\n      "allowed": ["x",\n "y"]\n    }\n  ]\n}',
    );
    expect(lines.get("routes")).toBe(2);
    expect(lines.get("routes[0]")).toBe(3);
    expect(lines.get("routes[0].template")).toBe(4);
    expect(lines.get("routes[0].allowed[1]")).toBe(6);
  });
});

describe("a data error names the line of its entry", () => {
  it("a route with a repeated parameter: data/routes.json:LINE of its template", () => {
    const dir = scratchProject();
    const routes = join(dir, "data", "routes.json");
    const text = [
      "{",
      '  "routes": [',
      '    { "product": "p", "api": "a", "template": "/v1/roles", "allowed": "all_synced" },',
      "    {",
      '      "product": "p",',
      '      "api": "a",',
      '      "template": "/v2/{x}/y/{x}",',
      '      "allowed": "all_synced"',
      "    }",
      "  ]",
      "}",
    ].join("\n");
    writeFileSync(routes, text);
    let error: unknown;
    try {
      loadCatalog(join(dir, "data"));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DataError);
    expect((error as DataError).line).toBe(7);
    expect((error as Error).message).toBe(
      `${routes}:7: routes[1].template: parameter {x} appears twice (characters 5 and 11); each name may appear once`,
    );
  });

  it("invalid JSON: one line, with line and column", () => {
    const dir = scratchProject();
    const roles = join(dir, "data", "roles.json");
    writeFileSync(roles, '{\n  "roles": [\n    "t_adulte",]\n}\n');
    expect(() => loadCatalog(join(dir, "data"))).toThrow(
      `${roles}:3:16: invalid JSON: unexpected "]" where a value was expected`,
    );
  });
});
