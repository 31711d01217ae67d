/**
 * A review's places named from the repository's top level: a project in a subfolder of its repository
 * (`services/orders/policy`) locates a change at `services/orders/policy/data/routes.json`, which is what a pull
 * request's files, code scanning (SARIF %SRCROOT%) and workflow annotations name. Applied when every place is
 * relative to the project folder (both sides git revisions or the working tree); a report of a project at the top
 * level is unchanged.
 */
import type { ReviewReport } from "./review-report.js";

export function inRepository(report: ReviewReport, prefix: string): ReviewReport {
  if (prefix === "") return report;
  const at = (file: string) => (file === "" || file.startsWith("/") ? file : `${prefix}${file}`);
  return {
    ...report,
    rows: report.rows.map((row) => ({ ...row, causes: row.causes.map((c) => ({ ...c, file: at(c.file) })) })),
    tests: report.tests && {
      ...report.tests,
      failed: report.tests.failed.map((f) => ({ ...f, file: at(f.file) })),
    },
    ...(report.error?.location
      ? { error: { ...report.error, location: { ...report.error.location, file: at(report.error.location.file) } } }
      : {}),
  };
}
