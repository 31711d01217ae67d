import { describe, expect, it } from "vitest";
import { renderJunit } from "../../src/toolchain/policy-test-junit.js";
import type { PolicyTestCase, PolicyTestReport } from "../../src/toolchain/run-policy-tests.js";
import { findAll, parseXml } from "../support/xml.js";

function testCase(name: string, status: PolicyTestCase["status"], extra: Partial<PolicyTestCase> = {}): PolicyTestCase {
  const test = name.replace(/\[.*$/, "");
  return {
    name,
    test,
    package: "data.p_test",
    location: "policies/p_test.rego:7",
    file: "/project/policies/p_test.rego",
    line: 7,
    status,
    durationNs: 2_000_000,
    output: "",
    error: "",
    ...extra,
  };
}

function report(cases: PolicyTestCase[], coverage: number | null): PolicyTestReport {
  const failed = cases.filter((c) => c.status === "fail");
  return {
    cases,
    passed: cases.filter((c) => c.status === "pass").length,
    failed,
    skipped: 1,
    coverage,
    uncovered: coverage === 100 ? [] : ["policies/p.rego:3"],
  };
}

describe("JUnit XML of a policy-test report", () => {
  const hostile = "printed: <tag> & \"quotes\" 'apos' \u0001\u001b[31m \uD800 done";
  const cases = [
    testCase("data.p_test.test_plain", "pass"),
    testCase("data.p_test.test_table[a & <b>]", "fail", { output: hostile }),
    testCase("data.p_test.test_table[ok]", "pass", { output: hostile }),
    testCase("data.p_test.test_errs", "fail", {
      error: "p_test.rego:9: eval_conflict_error: functions must not produce multiple outputs",
    }),
    testCase("data.p_test.todo_test_later", "skip"),
  ];

  it("is well-formed, counts every case, and carries failures, skips and output (control characters replaced)", () => {
    const root = parseXml(renderJunit(report(cases, 97.5), 100));
    expect(root.attributes).toMatchObject({ tests: "6", failures: "3", skipped: "1" });
    const suites = findAll(root, "testsuite");
    expect(suites.map((s) => s.attributes.name)).toEqual(["data.p_test", "coverage"]);
    // four test rules of 2 ms: the two cases of test_table share one duration, counted once
    expect(suites[0]!.attributes).toMatchObject({ tests: "5", failures: "2", skipped: "1", time: "0.008000" });
    const byName = new Map(findAll(root, "testcase").map((c) => [c.attributes.name, c]));
    expect(byName.get("test_table[a & <b>]")!.attributes).toMatchObject({
      classname: "data.p_test",
      file: "policies/p_test.rego",
      line: "7",
    });
    expect(findAll(byName.get("test_table[a & <b>]")!, "failure")[0]!.text).toBe(
      "printed: <tag> & \"quotes\" 'apos' \uFFFD\uFFFD[31m \uFFFD done",
    );
    expect(findAll(byName.get("test_table[ok]")!, "failure")).toHaveLength(0);
    expect(findAll(byName.get("test_errs")!, "failure")[0]!.attributes).toMatchObject({
      type: "error",
      message: expect.stringContaining("eval_conflict_error") as unknown,
    });
    expect(findAll(byName.get("todo_test_later")!, "skipped")).toHaveLength(1);
    const coverage = findAll(byName.get("coverage >= 100%")!, "failure")[0]!;
    expect(coverage.attributes.message).toBe("coverage 97.50% (required 100%)");
    expect(coverage.text).toContain("policies/p.rego:3");
  });

  it("passes the coverage case at or above the minimum, fails it when coverage was not measured", () => {
    const ok = parseXml(renderJunit(report([cases[0]!], 100), 100));
    expect(ok.attributes.failures).toBe("0");
    const unmeasured = parseXml(renderJunit(report([cases[0]!], null), 100));
    expect(findAll(unmeasured, "failure")[0]!.attributes.message).toMatch(/not measured/);
  });
});

describe("the XML reader used to check it", () => {
  it.each([
    ["crossed tags", "<a><b></a></b>"],
    ["raw ampersand", "<a>x & y</a>"],
    ["raw < in an attribute", '<a x="<"/>'],
    ["control character", "<a>\u0001</a>"],
    ["control character reference", "<a>&#1;</a>"],
    ["duplicate attribute", '<a x="1" x="2"/>'],
    ["unclosed root", "<a>"],
    ["two roots", "<a/><b/>"],
  ])("refuses %s", (_, xml) => {
    expect(() => parseXml(xml)).toThrow(/^xml: /);
  });

  it("reads entities, attributes and nesting", () => {
    const root = parseXml('<?xml version="1.0"?>\n<a k="&quot;v&#x41;&quot;"><b>1 &lt; 2</b><!-- c --><b/></a>\n');
    expect(root.attributes.k).toBe('"vA"');
    expect(findAll(root, "b").map((b) => b.text)).toEqual(["1 < 2", ""]);
  });
});
