/**
 * Memory per worker of `portier serve`, for sizing --workers: resident memory (RSS, from /proc) of the whole
 * process tree once /ready answers 200, for the sample directory and for generated NDJSON directories
 * (test/bench/directory.ts's generator), with --workers 1 and 2 (each worker is the service of --workers 1; the
 * rest is the primary). Each row is one fresh process tree, read 5 s after it became ready; no collection is
 * forced, so RSS includes what V8 has not collected or returned yet. Directories: BENCH_MEMORY_RECORDS
 * (default "1000000,3000000"). Run: npx tsx test/bench/worker-memory.ts (after npx tsc -p tsconfig.json).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportJWK, generateKeyPair } from "jose";
import { writeDirectory } from "./directory.js";
import { PORTIER_BIN } from "../support/portier-bin.js";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";

const RECORDS = (process.env.BENCH_MEMORY_RECORDS ?? "1000000,3000000").split(",").map(Number);
const SETTLE_MS = 5000;

/** RSS in bytes of a process and all its descendants (cluster workers), from /proc. */
function treeRss(pid: number): { total: number; processes: number } {
  let total = 0;
  let processes = 0;
  const walk = (p: number) => {
    try {
      const status = readFileSync(`/proc/${p}/status`, "utf8");
      total += Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
      processes++;
      for (const task of readdirSync(`/proc/${p}/task`)) {
        const children = readFileSync(`/proc/${p}/task/${task}/children`, "utf8").trim();
        for (const c of children ? children.split(" ") : []) walk(Number(c));
      }
    } catch {
      /* the process is gone */
    }
  };
  walk(pid);
  return { total, processes };
}

async function measure(args: string[]): Promise<{ total: number; processes: number; readyMs: number }> {
  const started = Date.now();
  const child = spawn(process.execPath, [PORTIER_BIN, "serve", "--port", "0", "--watch", "false", ...args], {
    cwd: PROJECT_ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        const m = /"msg":"listening"/.test(out) && /"url":"([^"]+)"/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.once("exit", (code) => reject(new Error(`serve exited with ${code}`)));
    });
    for (;;) {
      const res = await fetch(`${url}/ready`).catch(() => undefined);
      if (res?.status === 200) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const readyMs = Date.now() - started;
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    return { ...treeRss(child.pid!), readyMs };
  } finally {
    child.kill("SIGTERM");
    await new Promise((r) => child.once("exit", r));
  }
}

const mib = (n: number) => `${(n / 2 ** 20).toFixed(0)} MiB`;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "portier-worker-memory-"));
  try {
    const { publicKey } = await generateKeyPair("RS256");
    const jwks = join(dir, "jwks.json");
    writeFileSync(jwks, JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: "m1", alg: "RS256" }] }));
    const base = ["--issuer", "https://auth.bench.example", "--jwks", jwks];
    const directories: [string, string][] = [["sample (2 records)", join(PROJECT_ROOT, "data/sample/directory.json")]];
    for (const n of RECORDS) {
      const file = join(dir, `users-${n}.ndjson`);
      await writeDirectory(file, n, "ndjson");
      directories.push([`${n.toLocaleString("en")} records`, file]);
    }
    console.log(
      "| directory | --workers 1 (one process) | --workers 2 (primary + 2 workers) | the primary | ready after |",
    );
    console.log("|---|---|---|---|---|");
    for (const [name, file] of directories) {
      const one = await measure([...base, "--directory", file, "--workers", "1"]);
      const two = await measure([...base, "--directory", file, "--workers", "2"]);
      // With --workers 2 each worker is the service of --workers 1; what is left is the primary's.
      const ready = `${(one.readyMs / 1000).toFixed(1)} s, ${(two.readyMs / 1000).toFixed(1)} s`;
      console.log(
        `| ${name} | ${mib(one.total)} | ${mib(two.total)} (${two.processes} processes) | ` +
          `${mib(two.total - 2 * one.total)} | ${ready} |`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
