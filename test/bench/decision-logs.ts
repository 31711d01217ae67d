/**
 * What shipping the decision log costs per decision, in two parts.
 *
 * In process (CPU time of this process, libuv's compression threads included; interleaved rounds, medians):
 * N recorded decisions written as today's stdout line (pino's logger.info to /dev/null, no pipeline) against the
 * decision-log pipeline of this tree with the project's bundle's rules: the line alone; shipping to a live
 * collector (the Shipper, gzip, HTTP to a server in this process) with the line off; shipping with the line; and
 * the collector down (a port nobody listens on, a 1 MiB buffer full and dropping), line off.
 *
 * Over HTTP with wrk, every side BENCH_PROCESSES (2) processes of this tree's
 * `node dist/cli/main.js serve` (one worker, stdout to /dev/null), interleaved rounds in one run, medians:
 *   - stdout line: the decision line on stdout only (no collector), the baseline of every ratio;
 *   - shipping, line off: --decision-log-url to a live collector (a small HTTP server in this process that reads
 *     each upload and answers 204) with --no-decision-log-stdout;
 *   - shipping + line: the same with the stdout line kept;
 *   - collector down: --decision-log-url to a port nobody listens on, a 1 MiB buffer that fills and drops the
 *     oldest (its dropped count is printed), line off.
 * Load: POST /decide, a user token, path ids never repeating (no decision memo hit). Ratios: decisions per second
 * and CPU time per decision (the server's process tree, from /proc) against the stdout line.
 * Run: make build && npx tsx test/bench/decision-logs.ts (BENCH_SECONDS=3, BENCH_ROUNDS=5 by default; BENCH_HTTP=0: in
 * process only)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  createFixture,
  decideLoad,
  serveArgs,
  startCollector,
  startNode,
  stopServer,
  ROOT,
  type Server,
} from "./fixture.js";
import { pino, type Logger } from "pino";
import { loadEngine } from "../../src/engine/index.js";
import type { DecisionRecord } from "../../src/service/decide/record.js";
import { decisionLine } from "../../src/service/decision-logs/line.js";
import { DecisionLogPipeline } from "../../src/service/decision-logs/pipeline.js";
import type { DecisionSink } from "../../src/service/decision-logs/sink.js";
import { Shipper } from "../../src/service/decision-logs/shipper.js";
import { newStats } from "../../src/service/decision-logs/stats.js";
import { httpTarget } from "../../src/reload/index.js";
import { freePort } from "../support/free-port.js";
import { fmt, median } from "./measure.js";
import { haveWrk, interleavedRounds, type SideServer } from "./wrk.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/** Server processes per side over HTTP, pooled: two processes of one code differ by up to 7% (A/A). */
const PROCESSES = Number(process.env.BENCH_PROCESSES ?? 2);

/** A decision's record as the recorder builds it (run.ts), with decision `i`'s id and path. */
function line(i: number): DecisionRecord {
  const sub = "11111111-1111-4111-8111-111111111111";
  const path = `/v2/ORG001/elevesJeunes/${i}/absences`;
  return {
    decision_id: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
    time: Date.now(),
    request: {
      adapter: "decide",
      method: "GET",
      path,
      raw_path: undefined,
      client_address: "10.1.2.3",
      request_id: "5d41402abc4b2a76b9719d911017c592",
      traceparent: null,
    },
    result: {
      route: "/v2/{codeOrganisme}/elevesJeunes/{idEleveJeune}/absences",
      flow: "accessCode",
      client_id: "web",
      sub,
      tenant_id: "3f7c1a52-8d1e-4b7a-9c3e-5a2b6d8e9f01",
      roles: ["enseignant_jeune"],
      allow: true,
      status: 200,
      reason: "allowed",
      message: "enseignant_jeune may call /v2/{codeOrganisme}/elevesJeunes/{idEleveJeune}/absences",
      would_deny: null,
    },
    revision: "3bb5113cebd4",
    input: {
      method: "GET",
      path,
      token: { sub, client_id: "web", auth_time: 1795765410, idp: "local", tenant_id: "t", aud: [], scope: ["openid"] },
      roles: ["enseignant_jeune"],
      synced: true,
      role_check: "enforce",
    },
    trace_id: undefined,
    span_id: undefined,
    detail: undefined,
    latency_ms: 0.412,
  };
}

/** CPU microseconds per decision of the in-process sides, interleaved rounds, medians. */
async function inProcess(sinkUrl: string, downUrl: string): Promise<void> {
  const N = Number(process.env.BENCH_DECISIONS ?? 20_000);
  const engine = await loadEngine(join(ROOT, "build", "bundle.tar.gz"));
  const logger: Logger = pino({ base: { pid: process.pid } }, pino.destination({ dest: "/dev/null", sync: false }));
  const quiet = pino({ level: "silent" });
  type Side = { record(fields: ReturnType<typeof line>): void; settle(): Promise<void>; close(): Promise<void> };
  const pipelineSide = (url: string | undefined, stdout: boolean, bufferBytes = 16 << 20): Side => {
    const stats = newStats();
    const shipper =
      url === undefined
        ? undefined
        : new Shipper({
            target: httpTarget(url),
            token: () => undefined,
            bufferBytes,
            batchBytes: 32768,
            periodMs: 1000,
            timeoutMs: 2000,
            problemAfterMs: 60_000,
            stats,
            logger: quiet,
          });
    const sinks: DecisionSink[] = [];
    if (stdout) sinks.push({ wantsEvent: false, write: ({ record }) => logger.info(decisionLine(record), "decision") });
    if (shipper) sinks.push({ wantsEvent: true, write: ({ encoded }) => shipper.add(encoded()) });
    const p = new DecisionLogPipeline({
      sinks,
      rules: () => engine.logRules,
      event: { labels: { id: "bench", version: "0" }, bundleName: "portier" },
      stats,
      logger: quiet,
    });
    return {
      record: (f) => p.record(f),
      // Uploads of a live collector finish in the round that caused them.
      settle: async () => {
        await new Promise((r) => setImmediate(r));
        if (url === sinkUrl) while (stats.bufferedEvents > 0) await new Promise((r) => setTimeout(r, 5));
      },
      close: () => shipper?.close(Date.now()) ?? Promise.resolve(),
    };
  };
  const sides: [string, Side][] = [
    [
      "stdout line (today)",
      {
        record: (f) => logger.info(decisionLine(f), "decision"),
        settle: () => Promise.resolve(),
        close: () => Promise.resolve(),
      },
    ],
    ["pipeline: line", pipelineSide(undefined, true)],
    ["shipping, line off", pipelineSide(sinkUrl, false)],
    ["shipping + line", pipelineSide(sinkUrl, true)],
    ["collector down", pipelineSide(downUrl, false, 1 << 20)],
  ];
  const samples = new Map(sides.map(([name]) => [name, [] as number[]]));
  let next = 0;
  const round = async (side: Side): Promise<number> => {
    const t = process.cpuUsage();
    // As a server records them: a burst per turn of the event loop.
    for (let i = 0; i < N; i++) {
      side.record(line(next++));
      if (i % 50 === 49) await new Promise((r) => setImmediate(r));
    }
    await side.settle();
    const u = process.cpuUsage(t);
    return (u.user + u.system) / N;
  };
  for (const [, side] of sides) await round(side); // warm-up
  for (let r = 0; r < ROUNDS; r++)
    for (let i = 0; i < sides.length; i++) {
      const [name, side] = sides[(i + r) % sides.length]!;
      samples.get(name)!.push(await round(side));
    }
  console.log(`Decision logs in process (${N} decisions per round, ${ROUNDS} interleaved rounds, CPU time, medians):`);
  const base = median(samples.get("stdout line (today)")!);
  for (const [name] of sides) {
    const us = median(samples.get(name)!);
    console.log(`  ${name.padEnd(20)} ${us.toFixed(2).padStart(6)} us CPU/decision  ${(us / base).toFixed(3)}x`);
  }
  for (const [, side] of sides) await side.close();
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
  const sink = await startCollector();
  const downUrl = `http://127.0.0.1:${await freePort()}/logs`;
  await inProcess(sink.url, downUrl);
  if (process.env.BENCH_HTTP === "0") {
    sink.server.close();
    return;
  }
  if (!haveWrk()) {
    console.log("wrk not installed: the HTTP comparison is skipped");
    sink.server.close();
    return;
  }
  const f = await createFixture();
  const sides: [string, string[]][] = [
    ["stdout line", []],
    ["shipping, line off", ["--decision-log-url", sink.url, "--no-decision-log-stdout"]],
    ["shipping + line", ["--decision-log-url", sink.url]],
    [
      "collector down",
      ["--decision-log-url", downUrl, "--no-decision-log-stdout", "--decision-log-buffer-bytes", "1048576"],
    ],
  ];
  const servers: Server[] = [];
  const scriptDir = mkdtempSync(join(tmpdir(), "portier-wrk-"));
  try {
    const load = decideLoad(f);
    const runs: SideServer[] = [];
    for (let p = 0; p < PROCESSES; p++)
      for (const [side, [name, extra]] of sides.entries()) {
        const args = serveArgs(f, ["--decision-log-period-seconds", "1", ...extra]);
        const s = await startNode(name, [], join(ROOT, "dist", "cli", "main.js"), args, { readyPath: "/ready" });
        servers.push(s);
        runs.push({ name: `${name} #${p + 1}`, url: s.url, pid: s.child.pid!, side, load });
      }
    const load0 = loadavg()[0]!;
    // The warm-up also fills the down side's buffer.
    const { rps, cpuUs } = await interleavedRounds(runs, {
      sides: sides.length,
      rounds: ROUNDS,
      seconds: SECONDS,
      warmUpSeconds: 2,
      connections: 10,
      scriptFile: join(scriptDir, "load.lua"),
    });
    console.log(
      `Decision logs over HTTP with wrk (POST /decide, 10 connections, ${ROUNDS} interleaved rounds ` +
        `of ${SECONDS} s, medians; ${PROCESSES} processes per side, one worker each):`,
    );
    const [br, bc] = [median(rps[0]!), median(cpuUs[0]!)];
    for (const [i, [name]] of sides.entries()) {
      const [r, c] = [median(rps[i]!), median(cpuUs[i]!)];
      console.log(
        `  ${name.padEnd(20)} ${fmt(r).padStart(9)} (${c.toFixed(0)} us CPU/decision)  ` +
          `${(r / br).toFixed(3)}x decisions/s, ${(c / bc).toFixed(3)}x CPU per decision`,
      );
    }
    const down = servers[3]!;
    const dropped = await metric(down.url, 'portier_decision_logs_dropped_total{reason="buffer_full"}');
    const buffered = await metric(down.url, "portier_decision_logs_buffer_bytes");
    console.log(`  collector down: ${dropped} events dropped (buffer full), ${buffered} bytes buffered`);
    const mib = (sink.bytes() / 1024 / 1024).toFixed(1);
    console.log(`  live collector: ${sink.uploads()} uploads, ${mib} MiB gzip received (all sides)`);
    const load1 = loadavg()[0]!.toFixed(1);
    console.log(
      `  load average ${load0.toFixed(1)} at the start, ${load1} at the end, on ${availableParallelism()} cores`,
    );
  } finally {
    await Promise.all(servers.map(stopServer));
    sink.server.close();
    rmSync(scriptDir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
