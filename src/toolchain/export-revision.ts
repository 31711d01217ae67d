/**
 * A git revision's policies/ and data/ written into a folder without a checkout (git archive | tar -x), for the
 * review commands and `portier bundle build --rev`: the working tree and the index are never touched. The project
 * may be any folder of its repository (a team's project in `services/orders/policy`): its path relative to the
 * repository's top level is taken from the working tree and read at the revision, so both sides of a review are
 * the same folder.
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
 * Where a folder is in its git repository: the top level, and the folder's path from it ("" at the top, else
 * "services/orders/policy/", with its slash); undefined when the folder is in no git working tree.
 */
export function repositoryPlace(dir: string): { top: string; prefix: string } | undefined {
  try {
    const [top, prefix] = execFileSync("git", ["-C", dir, "rev-parse", "--show-toplevel", "--show-prefix"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).split("\n");
    return top ? { top, prefix: prefix ?? "" } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Writes policies/ and data/ of `ref` into `into` and returns its commit; throws RevisionError (in our words, not
 * git's) when `ref` names no commit of `repo` or the commit has no policies/ and data/ in the project's folder.
 */
export function exportRevision(repo: string, ref: string, into: string): string {
  const commit = revisionCommit(repo, ref);
  if (!commit) throw new RevisionError(`not found: ${ref} (no git revision of ${repo})`);
  // The project's folder at the commit, named from the top level (COMMIT:PATH is that folder's tree).
  const place = repositoryPlace(repo) ?? { top: repo, prefix: "" };
  const tree = place.prefix ? `${commit}:${place.prefix.replace(/\/$/, "")}` : commit;
  const script = 'set -o pipefail; git -C "$1" archive --format=tar "$2" policies data | tar -x -C "$3"';
  try {
    execFileSync("bash", ["-c", script, "_", place.top, tree, into], { stdio: ["ignore", "ignore", "pipe"] });
  } catch {
    const where = place.prefix ? ` in ${place.prefix.replace(/\/$/, "")}` : "";
    throw new RevisionError(`git revision ${ref} has no policies/ and data/${where} to build`);
  }
  return commit;
}
