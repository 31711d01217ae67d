/**
 * The package root (where policies/, data/ and tools/ live), found from this file's location so that
 * commands work from any working directory, compiled (dist/) or run from source (src/).
 */
import { fileURLToPath } from "node:url";
import { dirname, resolve } from "node:path";

export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
