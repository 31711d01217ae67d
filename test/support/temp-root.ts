/**
 * vitest global setup: one temporary folder per test run, under the system's, made the run's TMPDIR (node's
 * os.tmpdir() reads it, in the forks and in every process a test starts), and removed when the run ends, so that
 * the folders tests make with mkdtemp (services' key and directory files, projects, sockets) never pile up in /tmp.
 * PORTIER_KEEP_TEST_TMP=1 keeps it (its path is printed) to look at what a failed test left.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), "portier-tests-"));
  process.env.TMPDIR = root;
  return () => {
    if (process.env.PORTIER_KEEP_TEST_TMP === "1") console.log(`test run's temporary files kept in ${root}`);
    else rmSync(root, { recursive: true, force: true, maxRetries: 3 });
  };
}
