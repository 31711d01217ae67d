/**
 * Writes the generated docs: the reference pages (docs/reference/options.md, commands.md, metrics.md, codes.md,
 * from the option schema, each command's help, a real service's registry and the error classes with the policy's
 * reasons), the request-path picture (docs/images/request-path.svg, from docs/images/request-path.json) and the
 * Helm chart's values schema (deploy/helm/portier/values.schema.json, from the option schema).
 * `--check` writes nothing and exits 1 naming each file that differs from what the sources give (`make lint`).
 * Needs the built tree (`npx tsc -p tsconfig.json`, `make policies`): the commands and the service are run.
 *
 *   npx tsx tools/write-references.ts          # regenerate
 *   npx tsx tools/write-references.ts --check  # drift check
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { codesReference } from "./docs/codes-reference.js";
import { helmValuesSchema } from "./docs/helm-values-schema.js";
import { commandsReference } from "./docs/commands-reference.js";
import { metricsReference } from "./docs/metrics-reference.js";
import { optionsReference } from "./docs/options-reference.js";
import { requestPathSvg } from "./docs/request-path.js";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

const GENERATED: Record<string, () => string | Promise<string>> = {
  "docs/reference/options.md": optionsReference,
  "docs/reference/commands.md": commandsReference,
  "docs/reference/metrics.md": metricsReference,
  "docs/reference/codes.md": codesReference,
  "deploy/helm/portier/values.schema.json": helmValuesSchema,
  "docs/images/request-path.svg": () =>
    requestPathSvg(readFileSync(join(ROOT, "docs/images/request-path.json"), "utf8")),
};

function committed(file: string): string | undefined {
  try {
    return readFileSync(join(ROOT, file), "utf8");
  } catch {
    return undefined;
  }
}

const check = process.argv.includes("--check");
const drifted: string[] = [];
for (const [file, generate] of Object.entries(GENERATED)) {
  let text: string;
  try {
    text = await generate();
  } catch (err) {
    console.error(`${file}: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
  if (check) {
    if (committed(file) !== text) drifted.push(file);
    continue;
  }
  mkdirSync(dirname(join(ROOT, file)), { recursive: true });
  writeFileSync(join(ROOT, file), text);
  console.log(`wrote ${file}`);
}
if (drifted.length) {
  console.error(
    `${drifted.join(", ")}: differ from what the sources give; run npx tsx tools/write-references.ts and commit`,
  );
  process.exit(1);
}
if (check) console.log(`docs: ${Object.keys(GENERATED).length} generated files up to date`);
process.exit(0);
