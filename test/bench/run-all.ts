/**
 * `make bench`: runs every benchmark in one process run, one after the other (each reports ratios
 * against a baseline it measures itself in the same run, since this machine is shared and noisy).
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const BENCHES = [
  "engine",
  "memo",
  "auth",
  "service",
  "latency",
  "hot-path",
  "decision-logs",
  "tracing",
  "directory",
  "replay",
  "shadow",
  "scim",
  "bundle-bomb",
];
// Bounded so that the whole run stays within ~10 minutes on 2 loaded cores: the directory benchmark without the
// previous loader's baseline and with 2 reloads (run test/bench/directory.ts alone for the full comparison).
process.env.BENCH_DIRECTORY_PREVIOUS ??= "0";
process.env.BENCH_DIRECTORY_RELOADS ??= "2";

for (const name of BENCHES) {
  const file = fileURLToPath(new URL(`./${name}.ts`, import.meta.url));
  if (!existsSync(file)) continue;
  console.log(`\n=== bench: ${name}`);
  const mod = (await import(`./${name}.ts`)) as { main(): Promise<void> };
  await mod.main();
}
