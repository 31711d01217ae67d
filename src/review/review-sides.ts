/**
 * The two sides of `portier review`: what BASE and HEAD name (a bundle file, a policy folder, a git revision
 * of the project's repository, or the working tree) turned into an engine, plus the policies/ and data/
 * folder it was built from when there is one (for the policy tests and for locating a change's line).
 * Engines come from loadPolicySource, as for every review command; a git revision's sources are exported with
 * git archive into a temporary folder that `close()` removes.
 */
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { InProcessEngine } from "../engine/index.js";
import { PortierError } from "../errors/portier-error.js";
import { loadPolicySource } from "./load-policy-source.js";
import { exportRevision, revisionCommit } from "../toolchain/export-revision.js";
import { messageOf } from "../errors/caught.js";

/** A side that could not be read or built: the command could not answer (exit 2). */
export class ReviewSourceError extends PortierError {
  static override readonly code = "review_source";
}

export interface ReviewSide {
  /** As the user named it ("working tree" for a HEAD not given). */
  ref: string;
  kind: "bundle" | "folder" | "git" | "working tree";
  /** The commit of a git revision. */
  commit?: string;
  /** The folder holding policies/ and data/, for every kind but a bundle. */
  folder?: string;
  engine: InProcessEngine;
  close(): void;
}

function isPolicyFolder(dir: string): boolean {
  return existsSync(join(dir, "policies")) && existsSync(join(dir, "data"));
}

/**
 * Opens one side. `ref` undefined is the project's working tree. `role` (BASE or HEAD) starts every error,
 * so the reader knows which argument failed.
 */
export async function openSide(
  role: "BASE" | "HEAD",
  ref: string | undefined,
  opts: { project: string; opa?: string | undefined },
): Promise<ReviewSide> {
  const nothing = () => undefined;
  try {
    if (ref === undefined) {
      if (!isPolicyFolder(opts.project))
        throw new Error(`${opts.project} holds no policies/ and data/ (pass --project DIR)`);
      const engine = await loadPolicySource(opts.project, { opa: opts.opa });
      return { ref: "working tree", kind: "working tree", folder: opts.project, engine, close: nothing };
    }
    if (existsSync(ref)) {
      if (statSync(ref).isFile())
        return { ref, kind: "bundle", engine: await loadPolicySource(ref, { opa: opts.opa }), close: nothing };
      if (!isPolicyFolder(ref)) throw new Error(`${ref}: a policy folder must hold policies/ and data/`);
      const folder = resolve(ref);
      return { ref, kind: "folder", folder, engine: await loadPolicySource(folder, { opa: opts.opa }), close: nothing };
    }
    const commit = revisionCommit(opts.project, ref);
    if (!commit) throw new Error(`not found: ${ref} (not a bundle file, a policy folder, or a git revision)`);
    const work = mkdtempSync(join(tmpdir(), "portier-review-"));
    const close = () => rmSync(work, { recursive: true, force: true });
    try {
      // The engine is built as every review command builds a revision; the sources beside it are the same files.
      const engine = await loadPolicySource(ref, { opa: opts.opa, repo: opts.project });
      exportRevision(opts.project, commit, work);
      return { ref, kind: "git", commit, folder: work, engine, close };
    } catch (err) {
      close();
      throw err;
    }
  } catch (err) {
    throw new ReviewSourceError(`${role} ${ref ?? "(working tree)"}: ${messageOf(err)}`, { cause: err });
  }
}
