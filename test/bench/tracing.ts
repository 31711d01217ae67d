/**
 * What tracing costs a decision: three `portier serve` processes of this tree (dist/, one worker each) under the
 * same load (each side run by several processes, BENCH_TRACING_PROCESSES), GET /forward-auth/nginx with a W3C
 * traceparent on every request (path ids never repeating, a cached
 * token): tracing off (no OTEL_* endpoint), tracing on with the gateway's span not sampled (flag 00: the
 * decision's ids are made, nothing recorded), and tracing on with every request sampled (flag 01: the span and
 * its two child steps recorded and exported). The OTLP endpoint is a collector in this process that accepts
 * and discards (fixture.ts). wrk drives each in interleaved rounds in rotating order; medians of req/s and of the
 * server's CPU
 * microseconds per request (its process tree, from /proc); ratios against tracing off, measured in the same run.
 * Then the decision tracer alone, in this process (tracer-cost.ts), the servers stopped.
 * Run: make build && npx tsx test/bench/tracing.ts (BENCH_TRACING_ROUNDS, BENCH_TRACING_SECONDS to shorten).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  createFixture,
  PATH_TEMPLATE,
  ROOT,
  serveArgs,
  startCollector,
  startNode,
  stopServer,
  type Server,
} from "./fixture.js";
import { fmt, median } from "./measure.js";
import { tracerCost } from "./tracer-cost.js";
import { haveWrk, interleavedRounds, type Load, type SideServer } from "./wrk.js";

const ROUNDS = Number(process.env.BENCH_TRACING_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_TRACING_SECONDS ?? 3);
/**
 * Server processes per side: two processes of one side differ by up to 7% in an A/A run (where the JIT and the
 * kernel place each), more than the 3% this benchmark must resolve; each side's figure pools its processes.
 */
const PROCESSES = Number(process.env.BENCH_TRACING_PROCESSES ?? 3);

/** The load, each token with a traceparent of its own; `flags` "01" sampled, "00" not. */
function load(tokens: string[], flags: "00" | "01"): Load {
  return {
    method: "GET",
    target: "/forward-auth/nginx",
    pathTemplate: PATH_TEMPLATE,
    unique: true,
    variants: tokens.map((token, i) => ({
      headers: {
        "x-original-method": "GET",
        "x-original-uri": "__PATH__",
        authorization: `Bearer ${token}`,
        traceparent: `00-${(i + 1).toString(16).padStart(32, "a")}-${(i + 1).toString(16).padStart(16, "b")}-${flags}`,
      },
    })),
  };
}

export async function main(): Promise<void> {
  if (!haveWrk()) {
    console.log("wrk not installed: tracing benchmark skipped");
    return;
  }
  const sink = await startCollector();
  const f = await createFixture();
  const scriptDir = mkdtempSync(join(tmpdir(), "portier-wrk-"));
  const scriptFile = join(scriptDir, "load.lua");
  const servers: Server[] = [];
  try {
    const traced = { OTEL_EXPORTER_OTLP_ENDPOINT: sink.origin, OTEL_SERVICE_NAME: "portier-bench" };
    const sides: [string, Record<string, string>, Load][] = [
      ["tracing off", {}, load(f.tokens, "01")],
      ["tracing on, unsampled", traced, load(f.tokens, "00")],
      ["tracing on, every request sampled", traced, load(f.tokens, "01")],
    ];
    const mainJs = join(ROOT, "dist", "cli", "main.js");
    // Processes side by side: side 0's first, side 1's first, ..., then each side's second, ...
    const runs: SideServer[] = [];
    for (let p = 0; p < PROCESSES; p++)
      for (const [side, [name, env, sideLoad]] of sides.entries()) {
        const s = await startNode(`${name} #${p + 1}`, [], mainJs, serveArgs(f), { readyPath: "/ready", env });
        servers.push(s);
        runs.push({ name: s.name, url: s.url, pid: s.child.pid!, side, load: sideLoad });
      }
    const load0 = loadavg()[0]!;
    const { rps, cpuUs: cpu } = await interleavedRounds(runs, {
      sides: sides.length,
      rounds: ROUNDS,
      seconds: SECONDS,
      warmUpSeconds: 2,
      connections: 10,
      scriptFile,
    });
    console.log(
      `GET /forward-auth/nginx with a traceparent, wrk (10 connections; ${PROCESSES} processes per side, ` +
        `${ROUNDS} interleaved rounds of ${SECONDS} s each, medians; ` +
        `load average ${load0.toFixed(1)} -> ${loadavg()[0]!.toFixed(1)}):`,
    );
    const [offRps, offCpu] = [median(rps[0]!), median(cpu[0]!)];
    for (let i = 0; i < sides.length; i++) {
      const [r, c] = [median(rps[i]!), median(cpu[i]!)];
      console.log(
        `  ${sides[i]![0].padEnd(36)} ${fmt(r).padStart(9)} req/s ${(r / offRps).toFixed(3)}x   ` +
          `${c.toFixed(0).padStart(5)} µs CPU/request ${(c / offCpu).toFixed(3)}x`,
      );
    }
    console.log(`  (the OTLP sink received ${sink.uploads()} exports, ${(sink.bytes() / 1024).toFixed(0)} KiB)`);
    for (const s of servers.splice(0)) await stopServer(s);
    await tracerCost(`${sink.origin}/v1/traces`);
  } finally {
    for (const s of servers) await stopServer(s);
    sink.server.close();
    rmSync(scriptDir, { recursive: true, force: true });
    rmSync(f.dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
