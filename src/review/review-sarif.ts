/**
 * `portier review --format sarif`: SARIF 2.1.0 for code scanning. Each change is a result located at the line
 * that causes it (data/routes.json, data/roles.json, data/tenants.json or a .rego file, relative to the project
 * folder): a grant gained is a warning, one opened to callers outside the role lists an error, one lost a note.
 */
import type { ReviewReport, ReviewRow } from "./review-report.js";
import { describeRow } from "./review-report.js";

const RULES = [
  { id: "portier/grant-gained-high-risk", text: "A route opened to callers outside the role lists", level: "error" },
  { id: "portier/grant-gained", text: "A grant gained", level: "warning" },
  { id: "portier/grant-lost", text: "A grant lost", level: "note" },
] as const;

function ruleOf(row: ReviewRow): (typeof RULES)[number] {
  if (row.change === "lost") return RULES[2];
  return row.risk === "high" ? RULES[0] : RULES[1];
}

export function renderReviewSarif(report: ReviewReport, version: string): string {
  const results = report.rows.flatMap((row) => {
    const rule = ruleOf(row);
    const base = {
      ruleId: rule.id,
      ruleIndex: RULES.indexOf(rule),
      level: rule.level,
      properties: { caller: row.caller, callerKind: row.callerKind, change: row.change, risk: row.risk },
    };
    if (row.causes.length === 0) return [{ ...base, message: { text: describeRow(row) } }];
    return row.causes.map((c) => ({
      ...base,
      message: { text: `${describeRow(row, c.templates)} (${c.why})` },
      locations: [
        {
          physicalLocation: {
            artifactLocation: { uri: c.file, uriBaseId: "%SRCROOT%" },
            region: { startLine: c.line },
          },
        },
      ],
    }));
  });
  const sarif = {
    $schema: "https://json.schemastore.org/sarif-2.1.0.json",
    version: "2.1.0",
    runs: [
      {
        tool: {
          driver: {
            name: "portier review",
            version,
            rules: RULES.map((r) => ({
              id: r.id,
              shortDescription: { text: r.text },
              defaultConfiguration: { level: r.level },
            })),
          },
        },
        automationDetails: { id: `portier-review/${report.base.ref}` },
        results,
      },
    ],
  };
  return JSON.stringify(sarif, null, 2) + "\n";
}
