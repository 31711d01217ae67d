/**
 * The `portier` program the real-process tests run: the compiled CLI in dist/ (what `make run` and users run),
 * started with plain `node`, without a TypeScript loader in every process and every cluster worker.
 * test/support/build-dist.ts (vitest's global setup) compiles it first whenever src/ is newer.
 */
import { join } from "node:path";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";

export const PORTIER_BIN = join(PROJECT_ROOT, "dist", "cli", "main.js");
