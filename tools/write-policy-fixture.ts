/**
 * Writes policies/portier/fixture_test.rego: the catalog (data.catalog) that the shared policies' unit tests
 * evaluate with (`with data.catalog as fixture.catalog`), built from Portier's own data/ and then frozen, so
 * those tests answer the same whichever project's data a run loads. Run: npx tsx tools/write-policy-fixture.ts
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { bundleData, loadCatalog } from "../src/catalog/index.js";
import { opaPath } from "../src/toolchain/opa.js";
import { PROJECT_ROOT } from "../src/toolchain/project-root.js";

const file = join(PROJECT_ROOT, "policies", "portier", "fixture_test.rego");
const catalog = bundleData(loadCatalog(join(PROJECT_ROOT, "data"))).catalog;
writeFileSync(
  file,
  [
    "# The catalog the shared policies' unit tests evaluate with (`with data.catalog as fixture.catalog`): the spec's",
    "# data as it was when this file was written, frozen, so that those tests answer the same whichever project's",
    "# data a run loads (portier test --project DIR). Written by tools/write-policy-fixture.ts; not in any bundle.",
    "package portier.fixture",
    "",
    `catalog := ${JSON.stringify(catalog, null, 2)}`,
    "",
  ].join("\n"),
);
execFileSync(opaPath(undefined), ["fmt", "-w", file]);
console.log(`wrote ${file}`);
