/**
 * What the decision-log rules read of an event, by the real `opa deps`: constant paths followed through other
 * packages and functions; a ref with a variable key, the whole input, or a builtin whose answer changes from call
 * to call means every event is evaluated whole (null).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { OPA_IGNORES } from "../../src/toolchain/build-bundle.js";
import { inputPaths, logRulesReads } from "../../src/toolchain/log-rules-reads.js";
import { opaPath } from "../../src/toolchain/opa.js";

const LOG = `package portier.log

rules := {"drop": drop, "mask": mask}

default drop := false
`;

/** The read paths of a project of two modules: portier.log (LOG + `log`) and another package (`other`). */
async function readsOf(log: string, other: string): Promise<string[][] | null> {
  const dir = mkdtempSync(join(tmpdir(), "portier-reads-"));
  const sources = [`${LOG}${log}\n`, `package other\n\n${other}\n`];
  writeFileSync(join(dir, "log.rego"), sources[0]!);
  writeFileSync(join(dir, "other.rego"), sources[1]!);
  writeFileSync(join(dir, "log_test.rego"), "package portier.log_test\n\ntest_now if time.now_ns() > input.x\n");
  return logRulesReads(opaPath(), [...OPA_IGNORES, "-d", dir], sources);
}

describe("the paths the decision-log rules read (opa deps)", () => {
  it.each([
    [
      "constant paths, a deeper one inside a shorter",
      'mask contains "/input/a" if { input.result.allow; input.result }',
      "",
      [["result"]],
    ],
    [
      "through another package's rule and function",
      'mask contains "/input/a" if data.other.f(input.result.reason)\ndrop if data.other.g',
      "f(x) := x == input.labels.env\n\ng if input.input.token.nonce",
      [
        ["input", "token", "nonce"],
        ["labels", "env"],
        ["result", "reason"],
      ],
    ],
    [
      "a variable key stops the path",
      'mask contains "/input/a" if input.input.roles[_] == "x"',
      "",
      [["input", "roles"]],
    ],
    ["no read at all", 'mask contains "/input/a" if true', "", []],
    ["the whole input", 'mask contains "/input/a" if walk(input, [_, "x"])', "", null],
    ["a variable key at the top", 'mask contains "/input/a" if { some k; input[k] == 1 }', "", null],
    ["the time in another package", "drop if data.other.late", "late if time.now_ns() > 0", null],
  ])("%s", async (_name, log, other, want) => {
    expect(await readsOf(log, other)).toEqual(want);
  });

  it("keep only the paths under input, sorted, without repeats", () => {
    const s = (value: string) => ({ type: "string", value });
    const input = { type: "var", value: "input" };
    expect(
      inputPaths([
        [input, s("b"), s("c")],
        [{ type: "var", value: "data" }, s("x")],
        [input, s("a")],
        [input, s("b"), s("c")],
        [input, s("a"), s("z")],
      ]),
    ).toEqual([["a"], ["b", "c"]]);
  });
});
