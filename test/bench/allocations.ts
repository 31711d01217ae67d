/**
 * What a request allocates on the JS heap (issue 20, "fewer objects per request"): Portier `serve` (from dist/,
 * one worker, decision log on to /dev/null) and the same-shaped server, each under wrk with the service
 * benchmark's requests (GET /forward-auth/nginx and POST /decide, path ids never repeating), with V8's sampling
 * heap profiler on (test/bench/heap-sampler.mjs, preloaded; it counts objects already collected, so it measures
 * allocation, not what survives). Prints the bytes allocated per request by the cost categories of stacks.ts and
 * the functions that allocate most, and writes allocation flame graphs (bytes, not time) to build/profile/.
 * Every byte allocated is a cache line the request writes and the young-generation collector later sweeps past:
 * between requests, the CPU profile's stages cost 3-5 times their tight-loop figures.
 * Run: make profile (after profile.ts), or make build && npx tsx test/bench/allocations.ts (ALLOC_SECONDS=3 sampled
 * after a 3 s warm-up).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  createFixture,
  decideLoad,
  forwardAuthLoad,
  ROOT,
  serveArgs,
  shapeOf,
  SHAPED,
  startNode,
  stopServer,
  type Fixture,
  type Server,
} from "./fixture.js";
import { CATEGORIES, costTable, foldedText, foldHeapProfile, type CostRow, type HeapProfile } from "./stacks.js";
import { FLAMEGRAPH, flameGraph, OUT } from "./profile.js";
import { haveWrk, runWrk, type Load } from "./wrk.js";

const SECONDS = Number(process.env.ALLOC_SECONDS ?? 3);
const WARM_UP = 3;
const SAMPLER = join(ROOT, "test", "bench", "heap-sampler.mjs");

interface Measured {
  label: string;
  rows: CostRow[];
  bytesPerRequest: number;
  top: [string, number][];
}

async function measure(
  label: string,
  start: () => Promise<Server>,
  load: Load,
  f: Fixture,
  key: string,
): Promise<Measured> {
  const server = await start();
  const scriptFile = join(f.dir, "load.lua");
  const out = join(f.dir, `${key}.heapprofile`);
  try {
    await runWrk(server.url, load, { connections: 10, seconds: WARM_UP, start: 1, scriptFile });
    server.child.kill("SIGUSR2");
    await new Promise((r) => setTimeout(r, 200));
    const r = await runWrk(server.url, load, { connections: 10, seconds: SECONDS, start: 100_000_000, scriptFile });
    if (r.bad > 0) throw new Error(`${label}: ${r.bad} errors or non-2xx answers`);
    server.child.kill("SIGUSR2");
    const end = Date.now() + 30_000;
    while (!existsSync(out)) {
      if (Date.now() > end) throw new Error(`${label}: no heap profile written`);
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 300)); // the write finishes
    const folded = foldHeapProfile(JSON.parse(readFileSync(out, "utf8")) as HeapProfile);
    // The requests answered while sampling (a few land between the signal and wrk's start or end).
    const bytes = [...folded.values()].reduce((a, b) => a + b, 0);
    const bytesPerRequest = bytes / r.requests;
    const self = new Map<string, number>();
    for (const [stack, n] of folded) {
      const leaf = stack.slice(stack.lastIndexOf(";") + 1);
      self.set(leaf, (self.get(leaf) ?? 0) + n / r.requests);
    }
    writeFileSync(join(OUT, `alloc-${key}.folded`), foldedText(folded));
    if (existsSync(FLAMEGRAPH))
      flameGraph(folded, `${label}: bytes allocated (sampling heap profiler)`, join(OUT, `alloc-${key}.svg`), "bytes");
    return {
      label,
      rows: costTable(folded, bytesPerRequest),
      bytesPerRequest,
      top: [...self].sort((a, b) => b[1] - a[1]).slice(0, 12),
    };
  } finally {
    await stopServer(server);
  }
}

export async function main(): Promise<void> {
  if (!haveWrk()) {
    console.log("wrk is not installed (apt-get install wrk): allocation profile skipped");
    return;
  }
  mkdirSync(OUT, { recursive: true });
  const f = await createFixture();
  try {
    const mainJs = join(ROOT, "dist", "cli", "main.js");
    const probe = await startNode("Portier", [], mainJs, serveArgs(f), { readyPath: "/ready" });
    const shape = await shapeOf(probe.url, f).finally(() => stopServer(probe));
    const load0 = loadavg()[0]!;
    const results: Measured[] = [];
    for (const [loadName, load] of [
      ["forward-auth", forwardAuthLoad(f)],
      ["decide", decideLoad(f)],
    ] as const) {
      for (const portier of [true, false]) {
        const key = `${portier ? "portier" : "same-shaped"}-${loadName}`;
        const env = { HEAP_SAMPLE_OUT: join(f.dir, `${key}.heapprofile`) };
        const label = `${
          portier ? "Portier" : "same-shaped server"
        }, ${loadName === "decide" ? "/decide" : "/forward-auth"}`;
        const nodeArgs = ["--import", SAMPLER];
        const start = portier
          ? () => startNode(label, nodeArgs, mainJs, serveArgs(f), { readyPath: "/ready", env })
          : () =>
              startNode(label, nodeArgs, SHAPED, ["{port}"], { readyPath: "/", env: { ...env, BENCH_SHAPE: shape } });
        results.push(await measure(label, start, load, f, key));
      }
    }
    const load1 = loadavg()[0]!;
    console.log(`\n| bytes allocated per request | ${results.map((r) => r.label).join(" | ")} |`);
    console.log(`|---|${results.map(() => "---").join("|")}|`);
    for (const c of CATEGORIES) {
      const cells = results.map((r) => {
        const row = r.rows.find((x) => x.category === c)!;
        return row.samples === 0
          ? ""
          : `${Math.round(row.us).toLocaleString("en")} B (${(row.share * 100).toFixed(0)}%)`;
      });
      if (cells.some((x) => x !== "")) console.log(`| ${c} | ${cells.join(" | ")} |`);
    }
    console.log(
      `| **total** | ` +
        `${results.map((r) => `**${Math.round(r.bytesPerRequest).toLocaleString("en")} B**`).join(" | ")} |`,
    );
    for (const r of results.filter((x) => x.label.startsWith("Portier"))) {
      console.log(`\n${r.label}: the functions that allocate most (bytes per request, self)`);
      for (const [frame, n] of r.top) console.log(`  ${Math.round(n).toString().padStart(6)} B  ${frame}`);
    }
    console.log(
      `\nLoad average: ${load0.toFixed(1)} at the start, ${load1.toFixed(1)} at the end, ` +
        `on ${availableParallelism()} cores. Allocation flame graphs: build/profile/alloc-*.svg.`,
    );
  } finally {
    rmSync(f.dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
