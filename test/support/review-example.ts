/**
 * The example of docs/review/pull-requests.md: `portier review main --log review-logs/decisions.log` run, as a user
 * would, in a repository (test/support/review-repo.ts) whose branch makes a role gain a route. Shared by the test
 * that keeps the page's copy from drifting and by tools/write-review-example.ts, which rewrites it.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { portierProcess } from "./cli.js";
import { DECISION_LOG, makeReviewRepo } from "./review-repo.js";

export const EXAMPLE_COMMAND = `portier review main --log ${DECISION_LOG}`;
export const EXAMPLE_PAGE = join(PROJECT_ROOT, "docs", "review", "pull-requests.md");

/** What the command prints (stdout) and its exit code. */
export async function runExample(): Promise<{ output: string; code: number }> {
  const repo = makeReviewRepo();
  // `main` is the base; the branch under review is checked out with the role's gain.
  execFileSync("git", ["-C", repo.dir, "checkout", "-q", "-B", "teachers-see-calendars", repo.roleGain]);
  execFileSync("git", ["-C", repo.dir, "branch", "-f", "main", repo.base]);
  const args = EXAMPLE_COMMAND.split(" ").slice(1);
  const r = await portierProcess(args, { cwd: repo.dir });
  if (r.code === 2) throw new Error(`the example did not run: ${r.stderr}`);
  return { output: r.stdout, code: r.code };
}

/** The page's ```text block right after the example's command block. */
export const EXAMPLE_BLOCK =
  /(```sh[^\n]*\nportier review main --log review-logs\/decisions\.log\n```\n\n```text\n)([\s\S]*?)(```\n)/;

export function pageExample(): string | undefined {
  return EXAMPLE_BLOCK.exec(readFileSync(EXAMPLE_PAGE, "utf8"))?.[2];
}
