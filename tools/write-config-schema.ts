/**
 * Writes docs/config.schema.json from the schema the service validates its configuration with
 * (src/service/config.ts), so the documented keys cannot drift: `npx tsx tools/write-config-schema.ts`.
 * test/service/config.test.ts fails when the committed file differs.
 */
import { writeFileSync } from "node:fs";
import { configSchemaDocument } from "../src/service/config.js";

const out = new URL("../docs/config.schema.json", import.meta.url);
writeFileSync(out, `${JSON.stringify(configSchemaDocument(), null, 2)}\n`);
console.log(`wrote ${out.pathname}`);
