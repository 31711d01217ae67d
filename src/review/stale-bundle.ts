/**
 * Tells whether a built bundle is older than the policy sources it was built from: the newest file under
 * policies/ or data/ modified after the bundle, so review tools can warn before explaining a stale policy.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";

function newestFile(dir: string): { file: string; mtimeMs: number } | undefined {
  let newest: { file: string; mtimeMs: number } | undefined;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    const found = entry.isDirectory() ? newestFile(full) : { file: full, mtimeMs: statSync(full).mtimeMs };
    if (found && (!newest || found.mtimeMs > newest.mtimeMs)) newest = found;
  }
  return newest;
}

/** The source file (relative to projectDir) changed after the bundle was written, or undefined. */
export function newerSource(bundle: string, projectDir: string): string | undefined {
  if (!existsSync(bundle)) return undefined;
  const built = statSync(bundle).mtimeMs;
  for (const folder of ["policies", "data"]) {
    const dir = join(projectDir, folder);
    if (!existsSync(dir)) continue;
    const newest = newestFile(dir);
    if (newest && newest.mtimeMs > built) return relative(projectDir, newest.file);
  }
  return undefined;
}
