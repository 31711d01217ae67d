/**
 * GitHub Actions workflow commands for `portier review` run inside a workflow (GITHUB_ACTIONS=true): one
 * `::error` (high risk), `::warning` (grant gained) or `::notice` (grant lost) per change and causing line,
 * so the pull request's files show them. Values are escaped as the runner expects.
 */
import { describeRow, type ReviewReport } from "./review-report.js";

const data = (s: string) => s.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
const property = (s: string) => data(s).replace(/:/g, "%3A").replace(/,/g, "%2C");

export function renderAnnotations(report: ReviewReport): string[] {
  return report.rows.flatMap((row) => {
    const level = row.change === "lost" ? "notice" : row.risk === "high" ? "error" : "warning";
    const title = property(
      row.change === "lost"
        ? "Portier: grant lost"
        : `Portier: grant gained${row.risk === "high" ? " (high risk)" : ""}`,
    );
    if (row.causes.length === 0) return [`::${level} title=${title}::${data(describeRow(row))}`];
    return row.causes.map(
      (c) =>
        `::${level} file=${property(c.file)},line=${c.line},title=${title}::${data(describeRow(row, c.templates))}`,
    );
  });
}
