/**
 * What shipping the decision log costs per decision, over HTTP with wrk, every side this tree's
 * `node dist/cli/main.js serve` (one worker, stdout to /dev/null), interleaved rounds in one run, medians:
 *   - stdout line: the decision line on stdout only (no collector), the baseline of every ratio;
 *   - shipping, line off: --decision-log-url to a live collector (a small HTTP server in this process that reads
 *     each upload and answers 204) with --decision-log-stdout false;
 *   - shipping + line: the same with the stdout line kept;
 *   - collector down: --decision-log-url to a port nobody listens on, a 1 MiB buffer that fills and drops the
 *     oldest (its dropped count is printed), line off.
 * Load: POST /decide, a user token, path ids never repeating (no decision memo hit). Ratios: decisions per second
 * and CPU time per decision (the server's process tree, from /proc) against the stdout line.
 * Run: make build && npx tsx test/bench/decision-logs.ts (BENCH_SECONDS=3, BENCH_ROUNDS=5 by default)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server as HttpServer } from "node:http";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createFixture, decideLoad, serveArgs, startNode, stopServer, ROOT, type Server } from "./fixture.js";
import { freePort } from "../support/free-port.js";
import { fmt, median } from "./measure.js";
import { haveWrk, runWrk, treeCpuSeconds } from "./wrk.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

/** A collector that reads every upload and answers 204, counting bytes and uploads. */
async function startSink(): Promise<{ url: string; server: HttpServer; uploads: () => number; bytes: () => number }> {
  let uploads = 0;
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on("data", (c: Buffer) => (bytes += c.length));
    req.on("end", () => {
      uploads++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/logs`, server, uploads: () => uploads, bytes: () => bytes };
}

async function metric(url: string, name: string): Promise<string> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return (
    text
      .split("\n")
      .find((l) => l.startsWith(name))
      ?.split(" ")[1] ?? "n/a"
  );
}

export async function main(): Promise<void> {
  if (!haveWrk()) {
    console.log("wrk not installed: decision-log benchmark skipped");
    return;
  }
  const f = await createFixture();
  const sink = await startSink();
  const downUrl = `http://127.0.0.1:${await freePort()}/logs`;
  const sides: [string, string[]][] = [
    ["stdout line", []],
    ["shipping, line off", ["--decision-log-url", sink.url, "--decision-log-stdout", "false"]],
    ["shipping + line", ["--decision-log-url", sink.url]],
    [
      "collector down",
      ["--decision-log-url", downUrl, "--decision-log-stdout", "false", "--decision-log-buffer-bytes", "1048576"],
    ],
  ];
  const servers: Server[] = [];
  const scriptDir = mkdtempSync(join(tmpdir(), "portier-wrk-"));
  const scriptFile = join(scriptDir, "load.lua");
  try {
    for (const [name, extra] of sides) {
      const args = serveArgs(f, ["--decision-log-period-seconds", "1", ...extra]);
      servers.push(await startNode(name, [], join(ROOT, "dist", "cli", "main.js"), args, { readyPath: "/ready" }));
    }
    const load = decideLoad(f);
    let start = 1_000_000;
    const measure = async (s: Server, secs: number) => {
      const pid = s.child.pid!;
      const c0 = treeCpuSeconds(pid);
      const r = await runWrk(s.url, load, { connections: 10, seconds: secs, start, scriptFile });
      start += 10_000_000;
      if (r.bad > 0) throw new Error(`${s.name}: ${r.bad} errors or non-2xx answers`);
      return { rps: r.rps, cpuUs: ((treeCpuSeconds(pid) - c0) * 1e6) / Math.max(r.requests, 1) };
    };
    for (const s of servers) await measure(s, 2); // warm-up: JIT, token cache; fills the down side's buffer
    const samples = new Map(servers.map((s) => [s.name, { rps: [] as number[], cpuUs: [] as number[] }]));
    const load0 = loadavg()[0]!;
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < servers.length; i++) {
        const s = servers[(i + round) % servers.length]!;
        const m = await measure(s, SECONDS);
        samples.get(s.name)!.rps.push(m.rps);
        samples.get(s.name)!.cpuUs.push(m.cpuUs);
      }
    }
    console.log(
      `Decision logs over HTTP with wrk (POST /decide, 10 connections, ${ROUNDS} interleaved rounds of ${SECONDS} s, medians; one worker each):`,
    );
    const base = samples.get("stdout line")!;
    const [br, bc] = [median(base.rps), median(base.cpuUs)];
    for (const s of servers) {
      const x = samples.get(s.name)!;
      const [r, c] = [median(x.rps), median(x.cpuUs)];
      console.log(
        `  ${s.name.padEnd(20)} ${fmt(r).padStart(9)} (${c.toFixed(0)} us CPU/decision)  ${(r / br).toFixed(3)}x decisions/s, ${(c / bc).toFixed(3)}x CPU per decision`,
      );
    }
    const down = servers[3]!;
    console.log(
      `  collector down: ${await metric(down.url, 'portier_decision_logs_dropped_total{reason="buffer_full"}')} events dropped (buffer full), ${await metric(down.url, "portier_decision_logs_buffer_bytes")} bytes buffered`,
    );
    console.log(
      `  live collector: ${sink.uploads()} uploads, ${(sink.bytes() / 1024 / 1024).toFixed(1)} MiB gzip received from both shipping sides`,
    );
    console.log(
      `  load average ${load0.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end, on ${availableParallelism()} cores`,
    );
  } finally {
    await Promise.all(servers.map(stopServer));
    sink.server.close();
    rmSync(scriptDir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
