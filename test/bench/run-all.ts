/**
 * `make bench`: runs every benchmark in one process run, one after the other (each reports ratios
 * against a baseline it measures itself in the same run, since this machine is shared and noisy).
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const BENCHES = ["engine", "auth", "service", "hot-path", "directory", "replay", "bundle-bomb"];

for (const name of BENCHES) {
  const file = fileURLToPath(new URL(`./${name}.ts`, import.meta.url));
  if (!existsSync(file)) continue;
  console.log(`\n=== bench: ${name}`);
  const mod = (await import(`./${name}.ts`)) as { main(): Promise<void> };
  await mod.main();
}
