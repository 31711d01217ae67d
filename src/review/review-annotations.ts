/**
 * GitHub Actions workflow commands for `portier review` run inside a workflow (GITHUB_ACTIONS=true): one
 * `::error` (high risk), `::warning` (grant gained) or `::notice` (grant lost) per change and causing line, one
 * `::error` per failing policy test at its rule, and one `::error` at the file, line and column of a change that
 * does not parse or build, so the pull request's files show them. Values are escaped as the runner expects.
 */
import { describeRow, type ReviewReport } from "./review-report.js";

const data = (s: string) => s.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
const property = (s: string) => data(s).replace(/:/g, "%3A").replace(/,/g, "%2C");

function at(file: string, line: number, column?: number): string {
  return `file=${property(file)},line=${line},${column ? `col=${column},` : ""}`;
}

export function renderAnnotations(report: ReviewReport): string[] {
  const out = report.rows.flatMap((row) => {
    const level = row.change === "lost" ? "notice" : row.risk === "high" ? "error" : "warning";
    const title = property(
      row.change === "lost"
        ? "Portier: grant lost"
        : `Portier: grant gained${row.risk === "high" ? " (high risk)" : ""}`,
    );
    if (row.causes.length === 0) return [`::${level} title=${title}::${data(describeRow(row))}`];
    return row.causes.map(
      (c) => `::${level} ${at(c.file, c.line)}title=${title}::${data(describeRow(row, c.templates))}`,
    );
  });
  for (const f of report.tests?.failed ?? [])
    out.push(
      `::error ${f.file ? at(f.file, f.line) : ""}title=${property("Portier: policy test failed")}::` +
        data(`${f.name}: ${f.error}`),
    );
  const e = report.error;
  if (e) {
    const where = e.location ? at(e.location.file, e.location.line, e.location.column) : "";
    out.push(`::error ${where}title=${property("Portier: the review could not answer")}::${data(e.message)}`);
  }
  return out;
}
