import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";

function run(cmd: string, args: string[]): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: PROJECT_ROOT });
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c));
    child.stderr.resume();
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stdout }));
  });
}

/**
 * Runs `make unit` with a stand-in for vitest: a script that writes a JSON report with these counts (unless
 * null) to a scratch path, and exits with this code.
 */
function makeUnit(report: object | null, exitCode: number) {
  const dir = mkdtempSync(join(tmpdir(), "portier-fake-vitest-"));
  const reportFile = join(dir, "report.json");
  const write =
    report === null ? "" : `writeFileSync(${JSON.stringify(reportFile)}, ${JSON.stringify(JSON.stringify(report))});\n`;
  writeFileSync(
    join(dir, "fake-vitest.mjs"),
    `import { writeFileSync } from "node:fs";\n${write}process.exit(${exitCode});\n`,
  );
  // -o: take the build prerequisites as done; only the recipe is under test.
  return run("make", [
    "--no-print-directory",
    "-o",
    "dist/cli/main.js",
    "-o",
    "policies",
    "unit",
    `VITEST_RUN=node ${join(dir, "fake-vitest.mjs")}`,
    `VITEST_REPORT=${reportFile}`,
  ]);
}

const counts = (passed: number, failed: number, more: object = {}) => ({
  numPassedTests: passed,
  numFailedTests: failed,
  numPendingTests: 0,
  testResults: [],
  ...more,
});

describe("make unit's closing line", () => {
  it("is printed when tests fail, and make keeps vitest's failing exit code", async () => {
    const r = await makeUnit(counts(40, 2), 1);
    expect(r.stdout.trimEnd().split("\n").at(-1)).toBe("vitest: 40 passed, 2 failed");
    expect(r.code).not.toBe(0);
  });

  it("is printed when everything passes, with exit 0", async () => {
    const r = await makeUnit(counts(42, 0), 0);
    expect(r.stdout.trimEnd().split("\n").at(-1)).toBe("vitest: 42 passed, 0 failed");
    expect(r.code).toBe(0);
  });

  it("does not read as a pass when vitest failed outside tests or wrote no report", async () => {
    const outside = await makeUnit(counts(42, 0), 1);
    expect(outside.stdout).toMatch(/^vitest: 42 passed, 0 failed, exit 1: errors outside tests, see above$/m);
    expect(outside.code).not.toBe(0);
    const broken = await makeUnit(
      counts(3, 0, { testResults: [{ status: "failed", message: "Cannot find module", assertionResults: [] }] }),
      1,
    );
    expect(broken.stdout).toMatch(/^vitest: 3 passed, 0 failed, 1 file\(s\) failed to run$/m);
    const none = await makeUnit(null, 7);
    expect(none.stdout).toMatch(/^vitest: no report \(vitest exited 7 before writing \S+report\.json\)$/m);
    expect(none.code).not.toBe(0);
  });
});
