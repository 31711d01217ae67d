/**
 * Directory benchmark, one run: the streaming loader against the previous whole-file loader (kept as a
 * baseline in directory-probe.ts), each measurement in a fresh child process with --expose-gc:
 *   - heap + ArrayBuffer bytes per record at 1M records, load time (NDJSON and JSON array), memory after
 *     5 reloads (BENCH_DIRECTORY_RELOADS) relative to one index;
 *   - the worst decision latency while a 1M directory reloads (a decision due every 1 ms);
 * (Decisions/s with a 1M directory vs a tiny one: service.ts, through the real service, with CPU time per request.)
 * Run: npx tsx test/bench/directory.ts (make bench sets BENCH_DIRECTORY_PREVIOUS=0 BENCH_DIRECTORY_RELOADS=2); the 10M
 * check (streaming only, memory and load time):
 *   BENCH_DIRECTORY_RECORDS=10000000 BENCH_DIRECTORY_RELOADS=1 npx tsx test/bench/directory.ts
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { createWriteStream, mkdtempSync, rmSync } from "node:fs";
import { once } from "node:events";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { BENCH_TENANT, benchSub } from "./directory-probe.js";
import { endRecordLine } from "../../src/directory/index.js";

const PROBE = fileURLToPath(new URL("./directory-probe.ts", import.meta.url));
const RECORDS = Number(process.env.BENCH_DIRECTORY_RECORDS ?? 1_000_000);

/** A directory of n records; NDJSON is sealed (its end record counts and hashes what was written). */
export async function writeDirectory(file: string, n: number, format: "ndjson" | "json"): Promise<void> {
  const out = createWriteStream(file);
  const hash = createHash("sha256");
  let batch: string[] = [];
  const flush = async () => {
    const text = batch.join("");
    hash.update(text);
    if (!out.write(text)) await once(out, "drain");
    batch = [];
  };
  if (format === "json") batch.push("[\n");
  for (let i = 0; i < n; i++) {
    const roles =
      i % 3 === 0
        ? '["enseignant_jeune"]'
        : i % 3 === 1
          ? '["parent_eleve_jeune"]'
          : '["Enseignant jeune","directeur_jeune"]';
    const sep = format === "json" ? (i + 1 < n ? ",\n" : "\n") : "\n";
    batch.push(`{"sub":"${benchSub(i)}","tenant_id":"${BENCH_TENANT}","roles":${roles}}${sep}`);
    if (batch.length === 10_000) await flush();
  }
  if (format === "json") batch.push("]\n");
  await flush();
  if (format === "ndjson") out.write(`${endRecordLine(n, hash.digest("hex"))}\n`);
  out.end();
  await once(out, "finish");
}

function probe<T>(task: string, impl: string, file: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--expose-gc", "--import", "tsx", PROBE, task, impl, file], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.on("exit", (code) => {
      const line = out.trim().split("\n").pop() ?? "";
      if (code === 0 && line.startsWith("{")) resolve(JSON.parse(line) as T);
      else reject(new Error(`${task} ${impl} failed (exit ${code}): ${out.slice(-500)}`));
    });
  });
}

interface Memory {
  records: number;
  reloads: number;
  loadMs: number;
  fullGcMs: number;
  heapPerRecord: number;
  buffersPerRecord: number;
  bytesPerRecord: number;
  afterReloadsVsOne: number;
  rssAfterReloads: number;
  peakRss: number;
}
interface Stall {
  records: number;
  reloadMs: number;
  decisions: number;
  worstDecisionMs: number;
  p99DecisionMs: number;
  worstGapCpuMs: number;
}

const mb = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;

export async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "portier-dirbench-"));
  try {
    const big = join(dir, "big.ndjson");
    const bigJson = join(dir, "big.json");
    await writeDirectory(big, RECORDS, "ndjson");
    const n = RECORDS.toLocaleString("en");

    console.log(
      `Memory and load time, ${n} records (NDJSON; JSON array for the load time too); bytes = heap + ArrayBuffers ` +
        `after gc():`,
    );
    // The previous loader is the baseline of the streaming one; make bench leaves it out (BENCH_DIRECTORY_PREVIOUS=0)
    // to stay within ~10 minutes on a loaded machine, where its 1M loads take over a minute each.
    const impls =
      RECORDS > 4_000_000 || process.env.BENCH_DIRECTORY_PREVIOUS === "0" ? ["streaming"] : ["previous", "streaming"];
    const mem: Record<string, Memory> = {};
    for (const impl of impls) {
      const m = (mem[impl] = await probe<Memory>("memory", impl, big));
      console.log(
        `  ${impl.padEnd(10)} ${m.bytesPerRecord.toFixed(0).padStart(4)} B/record ` +
          `(heap ${m.heapPerRecord.toFixed(0)}, buffers ${m.buffersPerRecord.toFixed(0)}), ` +
          `load ${(m.loadMs / 1000).toFixed(2)} s; ` +
          `after ${m.reloads} reloads ${m.afterReloadsVsOne.toFixed(2)}x one index, RSS ` +
          `+${mb(m.rssAfterReloads)} (peak +${mb(m.peakRss)})`,
      );
    }
    if (mem.previous && mem.streaming) {
      const { streaming: s, previous: p } = mem;
      console.log(
        `  streaming vs ` +
          `previous: ${(s.bytesPerRecord / p.bytesPerRecord).toFixed(2)}x the ` +
          `bytes, ${(s.loadMs / p.loadMs).toFixed(2)}x the load time, ${(s.fullGcMs / p.fullGcMs).toFixed(2)}x ` +
          `the full GC`,
      );
    }
    if (RECORDS > 4_000_000) return;
    await writeDirectory(bigJson, RECORDS, "json");
    for (const impl of impls) {
      const m = await probe<Memory>("memory", impl, bigJson);
      console.log(
        `  ${impl.padEnd(10)} JSON array: ` +
          `load ${(m.loadMs / 1000).toFixed(2)} s, ${m.bytesPerRecord.toFixed(0)} B/record`,
      );
    }
    rmSync(bigJson);

    console.log(`Decisions during a ${n}-record reload (one due every 1 ms, in-process pipeline):`);
    const st: Record<string, Stall> = {};
    for (const impl of impls) {
      const s = (st[impl] = await probe<Stall>("stall", impl, big));
      console.log(
        `  ${impl.padEnd(10)} worst decision ${s.worstDecisionMs.toFixed(1)} ms, ` +
          `p99 ${s.p99DecisionMs.toFixed(1)} ms; longest gap between decisions ${s.worstGapCpuMs.toFixed(1)} ms of ` +
          `CPU; ` +
          `${s.decisions} decisions during a ${(s.reloadMs / 1000).toFixed(2)} s reload`,
      );
    }
    if (st.previous && st.streaming)
      console.log(
        `  streaming vs previous: worst ` +
          `decision ${(st.streaming.worstDecisionMs / st.previous.worstDecisionMs).toFixed(3)}x`,
      );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
