/**
 * `portier review --format junit`: JUnit XML for CI dashboards. Each change is a test case (grants, then the
 * recorded calls replayed), failing where --fail-on fails; the policy tests on HEAD are one more case.
 */
import { xmlEscape } from "../toolchain/policy-test-junit.js";
import { describeRow, type ReviewReport } from "./review-report.js";

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

export function renderReviewJunit(report: ReviewReport): string {
  const because = `fails --fail-on ${report.failOn}`;
  const cases: Case[] = report.rows.map((row) => ({
    classname: "portier.review.grants",
    name: describeRow(row),
    ...(row.failing ? { failure: `${because}: ${describeRow(row)}` } : {}),
  }));
  for (const r of report.replay?.rows ?? []) {
    const name =
      `${r.count} recorded call(s) ${r.change.replace("_", " ")}: ${r.route ?? "(no route)"} ` +
      `flow ${r.flow ?? "none"} ` +
      `roles [${r.roles.join(", ")}] (e.g. ${r.log}:${r.example.line})`;
    cases.push({ classname: "portier.review.replay", name, ...(r.failing ? { failure: `${because}: ${name}` } : {}) });
  }
  const t = report.tests;
  if (t) {
    const failed = t.failed.map((f) => `${f.name} at ${f.location}`).join("\n");
    const failure = t.failed.length > 0 ? `failed:\n${failed}` : t.coverage === null ? "no coverage" : undefined;
    cases.push({
      classname: "portier.review.tests",
      name: `policy tests on ${report.head.ref}: ${t.passed} passed, ${t.failed.length} failed`,
      ...(failure ? { failure } : {}),
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
