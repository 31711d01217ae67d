/**
 * Bundle bomb (issue 9 item 12): a ~2 MiB gzip that inflates to 2 GiB, loaded by loadEngine in a child
 * process so its peak memory is the load's own. Reports the time to refusal, the longest event-loop
 * stall meanwhile, peak RSS and the refusal message. Run alone: npx tsx test/bench/bundle-bomb.ts
 */
import { execFileSync } from "node:child_process";
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";
import { createGzip } from "node:zlib";

const SELF = fileURLToPath(import.meta.url);
const INFLATED_MIB = 2048;

async function writeBomb(file: string): Promise<void> {
  const chunk = Buffer.alloc(1 << 20);
  let n = 0;
  await pipeline(
    Readable.from(
      (function* () {
        while (n++ < INFLATED_MIB) yield chunk;
      })(),
    ),
    createGzip({ level: 9 }),
    createWriteStream(file),
  );
}

async function child(file: string): Promise<void> {
  const { loadEngine } = await import("../../src/engine/index.js");
  const bytes = readFileSync(file);
  let maxGap = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    maxGap = Math.max(maxGap, now - last);
    last = now;
  }, 5);
  const start = performance.now();
  let outcome = "loaded";
  try {
    await loadEngine(new Uint8Array(bytes), { source: "bomb.tar.gz" });
  } catch (err) {
    outcome = `refused: ${(err as Error).message}`;
  }
  const end = performance.now();
  clearInterval(timer);
  maxGap = Math.max(maxGap, end - last);
  console.log(
    JSON.stringify({
      ms: Math.round(end - start),
      maxEventLoopStallMs: Math.round(maxGap),
      peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
      outcome,
    }),
  );
}

export async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "portier-bomb-"));
  try {
    const file = join(dir, "bomb.tar.gz");
    await writeBomb(file);
    const out = execFileSync(process.execPath, ["--import", "tsx", SELF, "--child", file], { encoding: "utf8" });
    const r = JSON.parse(out.trim().split("\n").pop()!) as {
      ms: number;
      maxEventLoopStallMs: number;
      peakRssMiB: number;
      outcome: string;
    };
    console.log(`bundle bomb: ${(statSync(file).size / 2 ** 20).toFixed(1)} MiB gzip -> ${INFLATED_MIB} MiB inflated`);
    console.log(`  ${r.outcome}`);
    console.log(
      `  time to refusal ${r.ms} ms, longest event-loop stall ${r.maxEventLoopStallMs} ms, peak RSS of the loading ` +
        `process ${r.peakRssMiB} MiB`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === "--child") await child(process.argv[3]!);
else if (process.argv[1] === SELF) await main();
