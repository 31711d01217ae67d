/**
 * A git revision's policies/ and data/ written into a folder without a checkout (git archive | tar -x), for the
 * review commands and `portier bundle build --rev`: the working tree and the index are never touched.
 */
import { execFileSync } from "node:child_process";
import { PortierError } from "../errors/portier-error.js";

export class RevisionError extends PortierError {
  static override readonly code = "revision_invalid";
}

/** The commit a revision names in `repo`, or undefined when it names none. */
export function revisionCommit(repo: string, ref: string): string | undefined {
  try {
    return execFileSync("git", ["-C", repo, "rev-parse", "--verify", "--quiet", `${ref}^{commit}`], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    return undefined;
  }
}

/**
 * Writes policies/ and data/ of `ref` into `into` and returns its commit; throws RevisionError (in our words, not
 * git's) when `ref` names no commit of `repo` or the commit has no policies/ and data/.
 */
export function exportRevision(repo: string, ref: string, into: string): string {
  const commit = revisionCommit(repo, ref);
  if (!commit) throw new RevisionError(`not found: ${ref} (no git revision of ${repo})`);
  const script = 'set -o pipefail; git -C "$1" archive --format=tar "$2" policies data | tar -x -C "$3"';
  try {
    execFileSync("bash", ["-c", script, "_", repo, commit, into], { stdio: ["ignore", "ignore", "pipe"] });
  } catch {
    throw new RevisionError(`git revision ${ref} has no policies/ and data/ to build`);
  }
  return commit;
}
