/**
 * vitest global setup: the real-process tests run dist/cli/main.js (test/support/portier-bin.ts), so dist/
 * must be the compiled form of src/ as it is now. Compiles (tsc -p tsconfig.json) when dist/cli/main.js is
 * missing or older than any file under src/ or tsconfig.json (tools/build-dist.mjs: tsc, then the files dist/ loads
 * that tsc does not emit); `make test` has built it already.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { PORTIER_BIN } from "./portier-bin.js";

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function builtMtime(): number {
  try {
    return statSync(PORTIER_BIN).mtimeMs;
  } catch {
    return 0;
  }
}

export default function setup(): void {
  const source = Math.max(
    newestMtime(join(PROJECT_ROOT, "src")),
    statSync(join(PROJECT_ROOT, "tsconfig.json")).mtimeMs,
  );
  if (builtMtime() >= source) return;
  console.log("test setup: dist/ is older than src/, compiling (tools/build-dist.mjs)");
  execFileSync(process.execPath, [join(PROJECT_ROOT, "tools", "build-dist.mjs")], { stdio: "inherit" });
}
