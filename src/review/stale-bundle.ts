/**
 * Staleness by content: a bundle in a project's build/ folder (PROJECT/build/*.tar.gz, beside policies/ and
 * data/) is compared with the sources it would be built from now. Its revision is a digest of what it was
 * built from (the policies but their tests, and the data document of data/), so the same sources give the
 * same revision: a checkout that restored identical files is not stale, whatever the files' times. A stale
 * bundle, or sources that no longer load, is refused by every review command alike (StaleBundleError, exit 2).
 */
import { existsSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { PortierError } from "../errors/portier-error.js";
import { messageOf } from "../errors/caught.js";
import { sourcesRevision } from "../toolchain/build-bundle.js";

export class StaleBundleError extends PortierError {
  static override readonly code = "bundle_stale";
}

/** The project folder whose build/ holds this bundle file, or undefined for a bundle anywhere else. */
export function projectOfBundle(file: string): string | undefined {
  const build = dirname(resolve(file));
  const project = dirname(build);
  if (basename(build) !== "build") return undefined;
  return existsSync(join(project, "policies")) && existsSync(join(project, "data")) ? project : undefined;
}

/** A path as the user would type it from here: relative inside the current folder, else absolute. */
function fromHere(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel.startsWith("..") ? path : rel;
}

/** Throws StaleBundleError when a project's bundle was not built from the project's sources as they are now. */
export function refuseStaleBundle(file: string, revision: string): void {
  const project = projectOfBundle(file);
  if (project === undefined) return;
  const shown = fromHere(resolve(file));
  const build = `portier bundle build${project === process.cwd() ? "" : ` --project ${fromHere(project)}`}`;
  const fix = `run \`${build}\`, or pass --source ${fromHere(project) || "."} to read the sources`;
  let now: string;
  try {
    now = sourcesRevision(project);
  } catch (err) {
    throw new StaleBundleError(
      `${shown}: cannot tell whether it is up to date, the sources do not load: ${messageOf(err)}`,
    );
  }
  if (now !== revision)
    throw new StaleBundleError(
      `${shown} is stale: built from revision ${revision}, but policies/ and data/ are now revision ${now}; ${fix}`,
    );
}
