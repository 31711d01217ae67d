/**
 * The pull-request comment stays within a comment's size however large the change: at most 60 change rows and 10
 * failed policy tests are shown, followed by how many more there are (the other formats list all).
 */
import { describe, expect, it } from "vitest";
import { renderReviewMarkdown, type ReviewReport } from "../../src/review/index.js";

type Row = ReviewReport["rows"][number];

function report(rows: number, failedTests: number): ReviewReport {
  const row = (i: number): Row => ({
    change: "gained",
    risk: "high",
    callerKind: "tenant",
    caller: `application of tenant ${i}`,
    method: "GET",
    request: "GET, codeOrganisme ORG002",
    routes: [{ product: "Élève", api: "Élève", template: "/v2/{codeOrganisme}/elevesAdultes" }],
    before: { allow: false, reason: "tenant_mismatch" },
    after: { allow: true, reason: "allowed" },
    causes: [{ file: "data/tenants.json", line: 4, why: "binding", templates: ["/v2/{codeOrganisme}/elevesAdultes"] }],
    failing: true,
  });
  return {
    summary: `${rows} grants gained (${rows} high risk), 0 lost; no decision log replayed`,
    base: { ref: "main", kind: "git", revision: "a" },
    head: { ref: "working tree", kind: "working tree", revision: "b" },
    failOn: "new-allows",
    failing: true,
    findings: [`--fail-on new-allows matched ${rows} changes`],
    grants: { gained: rows, highRisk: rows, lost: 0 },
    routesAdded: [],
    routesRemoved: [],
    rows: Array.from({ length: rows }, (_, i) => row(i)),
    tests: {
      passed: 1,
      minCoverage: 100,
      coverage: null,
      failed: Array.from({ length: failedTests }, (_, i) => ({
        name: `t${i}`,
        location: "a.rego:1",
        file: "a.rego",
        line: 1,
        error: "the test's condition was false or undefined",
      })),
    },
    replay: null,
  };
}

describe("renderReviewMarkdown", () => {
  it("shows every row and failed test of a small change", () => {
    const md = renderReviewMarkdown(report(60, 10));
    expect(md.match(/^\| \*\*high\*\* \(fails\) \| gained \| application of tenant /gm)).toHaveLength(60);
    expect(md.match(/^- failed: /gm)).toHaveLength(10);
    expect(md).not.toContain("more");
  });

  it("says what high risk means only under a high-risk row", () => {
    const sentence = /High risk: a route opened to callers outside the role lists/;
    const high = report(1, 0);
    expect(renderReviewMarkdown(high)).toMatch(sentence);
    const normal = { ...high, rows: high.rows.map((r) => ({ ...r, risk: "normal" as const })) };
    expect(renderReviewMarkdown(normal)).not.toMatch(sentence);
    expect(renderReviewMarkdown({ ...high, rows: [], failing: false, findings: [] })).toMatch(
      /^Result with `--fail-on new-allows`: passes\.$/m,
    );
  });

  it("cuts a large one at 60 rows and 10 failed tests, saying how many more", () => {
    const md = renderReviewMarkdown(report(500, 300));
    expect(md.match(/^\| \*\*high\*\* \(fails\) \| gained \| application of tenant /gm)).toHaveLength(60);
    expect(md).toContain("... and 440 more changes: the json, sarif and junit formats list all.");
    expect(md.match(/^- failed: /gm)).toHaveLength(10);
    expect(md).toContain("- and 290 more (`portier test` lists them all)");
    expect(md.length).toBeLessThan(65_536);
  });
});
