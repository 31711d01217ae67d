/**
 * Test support: the project's compiled bundle (built by `make policies` before the tests run).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";

export const BUNDLE = join(PROJECT_ROOT, "build", "bundle.tar.gz");

export function requireBundle(): string {
  if (!existsSync(BUNDLE)) throw new Error(`${BUNDLE} is missing: run make policies first`);
  return BUNDLE;
}
