/**
 * Renders a policy-test report as JUnit XML for CI dashboards: one <testsuite> per Rego test package,
 * one <testcase> per test (per case of a data-driven test) with <failure> or <skipped>, and a last suite
 * "coverage" whose one case fails when OPA's coverage figure is below the required minimum.
 */
import type { PolicyTestCase, PolicyTestReport } from "./run-policy-tests.js";

// XML 1.0 allows tab, LF, CR and characters from U+0020 on; anything else (control characters, lone
// surrogates, U+FFFE/U+FFFF) is replaced so that a test's printed output can never break the document.
const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

export function xmlEscape(text: string): string {
  return text
    .replace(NOT_XML_CHAR, "\uFFFD")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

function attrs(values: Record<string, string | number>): string {
  return Object.entries(values)
    .map(([k, v]) => ` ${k}="${xmlEscape(String(v))}"`)
    .join("");
}

function seconds(ns: number): string {
  return (ns / 1e9).toFixed(6);
}

function testcase(c: PolicyTestCase): string {
  const [file, line] = c.location.split(/:(?=\d+$)/);
  const name = c.name.slice(c.package.length + 1);
  const head = `    <testcase${attrs({ classname: c.package, name, file: file ?? c.location, line: line ?? "" })}`;
  if (c.status === "pass") return `${head}/>`;
  if (c.status === "skip") return `${head}>\n      <skipped/>\n    </testcase>`;
  const message = c.error || `${c.name} failed`;
  const body = [c.error, c.output].filter(Boolean).join("\n") || "the test's body was false or undefined";
  const failure = `<failure${attrs({ message, type: c.error ? "error" : "fail" })}>${xmlEscape(body)}</failure>`;
  return `${head}>\n      ${failure}\n    </testcase>`;
}

export function renderJunit(report: PolicyTestReport, minCoverage: number): string {
  const packages = new Map<string, PolicyTestCase[]>();
  for (const c of report.cases) packages.set(c.package, [...(packages.get(c.package) ?? []), c]);
  const suites: string[] = [];
  let tests = 0;
  let failures = 0;
  let skipped = 0;
  let totalNs = 0;
  for (const [pkg, cases] of packages) {
    const f = cases.filter((c) => c.status === "fail").length;
    const s = cases.filter((c) => c.status === "skip").length;
    // A data-driven test's duration covers all its cases: count it once per test rule.
    const ns = [...new Map(cases.map((c) => [c.test, c.durationNs])).values()].reduce((a, b) => a + b, 0);
    tests += cases.length;
    failures += f;
    skipped += s;
    totalNs += ns;
    const suite = attrs({ name: pkg, tests: cases.length, failures: f, errors: 0, skipped: s, time: seconds(ns) });
    suites.push(`  <testsuite${suite}>\n${cases.map(testcase).join("\n")}\n  </testsuite>`);
  }
  const coverageFails = report.coverage === null || report.coverage < minCoverage;
  const coverageText =
    report.coverage === null
      ? "not measured: opa reports coverage only when every test passes"
      : `${report.coverage.toFixed(2)}% (required ${minCoverage}%)`;
  const uncovered = report.uncovered.length > 0 ? `\nnot covered:\n${report.uncovered.join("\n")}` : "";
  const coverageSuite = attrs({
    name: "coverage",
    tests: 1,
    failures: coverageFails ? 1 : 0,
    errors: 0,
    skipped: 0,
    time: seconds(0),
  });
  const coverageProperty = attrs({ name: "coverage", value: report.coverage === null ? "" : report.coverage });
  const coverageFailure = attrs({ message: `coverage ${coverageText}`, type: "coverage" });
  suites.push(
    [
      `  <testsuite${coverageSuite}>`,
      `    <properties>\n      <property${coverageProperty}/>\n    </properties>`,
      `    <testcase${attrs({ classname: "coverage", name: `coverage >= ${minCoverage}%` })}${
        coverageFails
          ? `>\n      <failure${coverageFailure}>${xmlEscape(coverageText + uncovered)}</failure>\n    </testcase>`
          : "/>"
      }`,
      "  </testsuite>",
    ].join("\n"),
  );
  tests += 1;
  failures += coverageFails ? 1 : 0;
  const all = attrs({ name: "portier policy tests", tests, failures, errors: 0, skipped, time: seconds(totalNs) });
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites${all}>\n${suites.join("\n")}\n</testsuites>\n`;
}
