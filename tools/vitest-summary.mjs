// Prints make test's closing line, `vitest: N passed, N failed`, from vitest's JSON report, also when vitest
// failed: usage `node tools/vitest-summary.mjs REPORT EXIT_CODE`. Test files that failed to load and errors
// outside tests (which fail the run without failing a test) are named, so the line never reads as a pass.
import { existsSync, readFileSync } from "node:fs";

const [report, exitCode = "0"] = process.argv.slice(2);
if (!report || !existsSync(report)) {
  console.log(`vitest: no report (vitest exited ${exitCode} before writing ${report ?? "its JSON report"})`);
} else {
  const r = JSON.parse(readFileSync(report, "utf8"));
  const parts = [`${r.numPassedTests} passed`, `${r.numFailedTests} failed`];
  if (r.numPendingTests) parts.push(`${r.numPendingTests} skipped`);
  const brokenFiles = (r.testResults ?? []).filter((f) => f.status === "failed" && f.message).length;
  if (brokenFiles) parts.push(`${brokenFiles} file(s) failed to run`);
  if (exitCode !== "0" && r.numFailedTests === 0 && brokenFiles === 0)
    parts.push(`exit ${exitCode}: errors outside tests, see above`);
  console.log(`vitest: ${parts.join(", ")}`);
}
