/**
 * `portier review --format junit`: JUnit XML for CI dashboards. Each finding is a test case: each grant change,
 * each group of recorded calls replayed, each failing policy test (with why), the policy tests' total, and a
 * review that could not answer; a case fails where --fail-on fails, a policy test failed, or there is no answer.
 */
import { xmlEscape } from "../toolchain/policy-test-junit.js";
import { describeReplayRow, describeRow, type ReviewReport } from "./review-report.js";

interface Case {
  classname: string;
  name: string;
  failure?: string;
}

function testcase(c: Case): string {
  const head = `    <testcase classname="${xmlEscape(c.classname)}" name="${xmlEscape(c.name)}"`;
  if (c.failure === undefined) return `${head}/>`;
  const failure = xmlEscape(c.failure);
  return `${head}>\n      <failure message="${failure}">${failure}</failure>\n    </testcase>`;
}

function testCases(report: ReviewReport): Case[] {
  const t = report.tests;
  if (!t) return [];
  const cases: Case[] = t.failed.map((f) => ({
    classname: "portier.review.tests",
    name: f.name,
    failure: `failed at ${f.location}: ${f.error}`,
  }));
  const failure =
    t.failed.length > 0
      ? `${t.failed.length} failed`
      : t.coverage === null
        ? "no coverage"
        : t.coverage < t.minCoverage
          ? `coverage ${t.coverage.toFixed(2)}% is below ${t.minCoverage}%`
          : undefined;
  cases.push({
    classname: "portier.review.tests",
    name: `policy tests on ${report.head.ref}: ${t.passed} passed, ${t.failed.length} failed`,
    ...(failure ? { failure } : {}),
  });
  return cases;
}

export function renderReviewJunit(report: ReviewReport): string {
  const because = `fails --fail-on ${report.failOn}`;
  const cases: Case[] = report.rows.map((row) => ({
    classname: "portier.review.grants",
    name: describeRow(row),
    ...(row.failing ? { failure: `${because}: ${describeRow(row)}` } : {}),
  }));
  for (const r of report.replay?.rows ?? []) {
    const name = describeReplayRow(r);
    cases.push({ classname: "portier.review.replay", name, ...(r.failing ? { failure: `${because}: ${name}` } : {}) });
  }
  cases.push(...testCases(report));
  const e = report.error;
  if (e) {
    const at = e.location
      ? `${e.location.file}:${e.location.line}${e.location.column ? `:${e.location.column}` : ""}: `
      : "";
    cases.push({
      classname: "portier.review.error",
      name: "the review could not answer",
      failure: `${at}${e.message}`,
    });
  }
  const suite = xmlEscape(`portier review ${report.base.ref} -> ${report.head.ref}`);
  const failures = cases.filter((c) => c.failure !== undefined).length;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="portier review" tests="${cases.length}" failures="${failures}">`,
    `  <testsuite name="${suite}" tests="${cases.length}" failures="${failures}">`,
    ...cases.map(testcase),
    "  </testsuite>",
    "</testsuites>",
    "",
  ].join("\n");
}
