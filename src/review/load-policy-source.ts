/**
 * Turns what a reviewer names into an engine: a bundle file (.tar.gz; one in a project's build/ folder is
 * refused when stale, stale-bundle.ts), a project folder holding policies/ and data/ (built with the pinned
 * opa), or a git revision of this repository (its policies/ and data/ exported with git archive, then built).
 * A name that is none of these is "not found: NAME".
 */
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadEngine, type InProcessEngine } from "../engine/index.js";
import { buildBundle, UNANNOTATED_ENTRYPOINTS } from "../toolchain/build-bundle.js";
import { opaPath } from "../toolchain/opa.js";
import { PROJECT_ROOT } from "../toolchain/project-root.js";
import { isProject } from "../toolchain/project.js";
import { messageOf } from "../errors/caught.js";
import { PortierError } from "../errors/portier-error.js";
import { refuseStaleBundle } from "./stale-bundle.js";
import { exportRevision, revisionCommit, RevisionError } from "../toolchain/export-revision.js";

export class PolicySourceError extends PortierError {
  static override readonly code = "policy_source_invalid";
  /** The temporary folder a git revision was exported to: the files its cause names are under it. */
  sourceRoot: string | undefined;
}

/** `unannotated`: entrypoints for policies older than the # METADATA annotations (git revisions only). */
async function engineFromFolder(folder: string, opa: string, unannotated?: string[]): Promise<InProcessEngine> {
  const work = mkdtempSync(join(tmpdir(), "portier-build-"));
  try {
    const out = join(work, "bundle.tar.gz");
    await buildBundle({ opa, projectDir: folder, workDir: work, out, ...(unannotated ? { unannotated } : {}) });
    return await loadEngine(out, { source: folder });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export async function loadPolicySource(
  source: string,
  opts: { opa?: string | undefined; repo?: string | undefined; project?: string | undefined } = {},
): Promise<InProcessEngine> {
  if (existsSync(source)) {
    // Anything but a folder is read as a bundle file (the reader refuses a device or a FIFO by name).
    if (!statSync(source).isDirectory()) {
      const engine = await loadEngine(source);
      refuseStaleBundle(source, engine.revision);
      return engine;
    }
    const folder = isProject(source) ? source : join(source, "..");
    if (!isProject(folder)) {
      throw new PolicySourceError(`${source}: a policy folder must hold data/routes.json (a policy project)`);
    }
    return engineFromFolder(folder, opaPath(opts.opa));
  }
  // Git revisions are of the project's repository (its policies/ and data/ at the repository's root).
  const repo = opts.repo ?? opts.project ?? PROJECT_ROOT;
  const work = mkdtempSync(join(tmpdir(), "portier-rev-"));
  try {
    try {
      exportRevision(repo, source, work);
    } catch (err) {
      throw new PolicySourceError(
        err instanceof RevisionError && revisionCommit(repo, source) === undefined
          ? `not found: ${source} (no bundle file, policy folder or git revision of ${repo})`
          : messageOf(err),
      );
    }
    try {
      // A revision from before the entrypoints were annotated builds with the entrypoints it had then.
      return await engineFromFolder(work, opaPath(opts.opa), UNANNOTATED_ENTRYPOINTS);
    } catch (err) {
      // Name the revision, not the temporary folders it was exported and built in.
      const message = messageOf(err)
        .split(`${work}/`)
        .join(`${source}:`)
        .replace(/\/[^\s:]*portier-build-[^/\s]+\//g, `${source}:build/`);
      const failure = new PolicySourceError(
        message.startsWith(`${source}`) ? `git revision ${message}` : `git revision ${source}: ${message}`,
        { cause: err },
      );
      failure.sourceRoot = work;
      throw failure;
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
