/**
 * Shadow candidate benchmark: decisions per second of `portier serve` with a shadow candidate evaluating 100% and
 * 10% of the decisions, against the same service without one, in one run. Three services (one worker each,
 * decision log on, to /dev/null) started once; wrk drives GET /forward-auth/nginx (fixture.ts: 100 users' tokens
 * in turn, path ids never repeating, so that no decision memo answers for either policy) in BENCH_ROUNDS rounds of
 * BENCH_SECONDS, the order rotating per round; medians, and ratios against the service without a shadow. The
 * candidate is a real bundle (test/support/candidate-bundle.ts) that takes the benchmark's route from its users'
 * role, so every shadowed decision differs and its log line carries `shadow`: the costliest case.
 * Targets (issue 27): 100% sampling >= 0.6x, 10% >= 0.9x. Also reported: server CPU microseconds per request and
 * its ratio (requests per CPU second against the service without a shadow: steadier than req/s when other
 * processes share the cores), with the load average, and the decisions the candidate skipped because its backlog
 * was full (which would flatter the ratio).
 * First, in this process, the same three services' decision pipelines (startService without a port: the real
 * verifier with cached tokens, directory, bundle, recorder and shadow, the log to nothing), decisions per CPU
 * second of this process, the candidate's deferred evaluations included: the shadow's own cost, without HTTP and
 * without the other processes' noise (BENCH_IN_PROCESS=0 skips it; BENCH_HTTP=0 runs only it).
 * Run: make build && npx tsx test/bench/shadow.ts (Portier runs from dist/).
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { Writable } from "node:stream";
import { pino } from "pino";
import { loadConfig, startService, type RunningService } from "../../src/service/index.js";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  createFixture,
  forwardAuthLoad,
  PATH_TEMPLATE,
  ROOT,
  serveArgs,
  shapeOf,
  startServer,
  stopServer,
  type Fixture,
  type Server,
} from "./fixture.js";
import { fmt, median } from "./measure.js";
import { haveWrk, interleavedRounds, type SideServer } from "./wrk.js";
import { placement } from "./pin.js";
import { buildCandidateBundle } from "../support/candidate-bundle.js";
import { metricValue } from "../support/metrics.js";

const PORTIER_MAIN = join(ROOT, "dist", "cli", "main.js");
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);

const SIDES = [
  { name: "no shadow", extra: [] as string[], target: undefined },
  { name: "shadow, --shadow-sample 1", extra: ["--shadow-sample", "1"], target: 0.6 },
  { name: "shadow, --shadow-sample 0.1", extra: ["--shadow-sample", "0.1"], target: 0.9 },
];

export async function main(): Promise<void> {
  if (!haveWrk()) throw new Error("wrk is not installed (Debian package wrk; `make bench` installs it)");
  if (!existsSync(PORTIER_MAIN)) throw new Error(`${PORTIER_MAIN} is missing: run make build first`);
  const dir = mkdtempSync(join(tmpdir(), "portier-bench-shadow-"));
  const servers: Server[] = [];
  try {
    const f = await createFixture();
    const candidate = await buildCandidateBundle(join(dir, "candidate.tar.gz"));
    for (const side of SIDES) {
      const extra = side.target === undefined ? [] : ["--shadow-bundle", candidate, ...side.extra];
      servers.push(
        await startServer(side.name, process.execPath, [PORTIER_MAIN, ...serveArgs(f, extra)], { readyPath: "/ready" }),
      );
    }
    if (process.env.BENCH_IN_PROCESS !== "0") await inProcess(f, candidate);
    if (process.env.BENCH_HTTP === "0") return;
    // Each service allows the benchmark's request (the candidate would deny it: shadow only).
    for (const s of servers) await shapeOf(s.url, f);
    const load = forwardAuthLoad(f, true);
    const runs = servers.map((s, side): SideServer => ({ name: s.name, url: s.url, pid: s.child.pid!, side, load }));
    const { rps: rates, cpuUs: cpu } = await interleavedRounds(runs, {
      sides: SIDES.length,
      rounds: ROUNDS,
      seconds: SECONDS,
      warmUpSeconds: 0,
      connections: CONNECTIONS,
      scriptFile: join(dir, "load.lua"),
    });
    console.log(
      `shadow: GET /forward-auth/nginx, ${CONNECTIONS} connections, ${ROUNDS} interleaved rounds of ${SECONDS} s, ` +
        `medians; ${placement()}; load average ${loadavg()[0]!.toFixed(1)}`,
    );
    const base = median(rates[0]!);
    const baseCpu = median(cpu[0]!);
    for (let i = 0; i < SIDES.length; i++) {
      const side = SIDES[i]!;
      const metrics = await (await fetch(`${servers[i]!.url}/metrics`)).text();
      const shadowed = ["new_allow", "new_deny", "other_reason", "same"].reduce(
        (n, change) => n + (metricValue(metrics, "portier_shadow_decisions_total", { change }) ?? 0),
        0,
      );
      const skipped = metricValue(metrics, "portier_shadow_skipped_total", { why: "backlog" }) ?? 0;
      const ratio = median(rates[i]!) / base;
      // Requests per CPU second against the service without a shadow: what req/s would be on an idle core (on a
      // shared, loaded machine req/s mostly measures the scheduler; CPU per request moves far less).
      const cpuRatio = baseCpu / median(cpu[i]!);
      const met = (r: number) => (side.target === undefined ? "" : r >= side.target ? " (met)" : " (NOT met)");
      const target = side.target === undefined ? "" : `  target >= ${side.target}x`;
      console.log(
        `  ${side.name.padEnd(28)} ${median(rates[i]!).toFixed(0).padStart(7)} req/s  ratio ${ratio.toFixed(3)}` +
          `${met(ratio)}  cpu ${median(cpu[i]!).toFixed(0).padStart(4)} us/req  cpu ratio ${cpuRatio.toFixed(3)}` +
          `${met(cpuRatio)}  shadowed ${shadowed}, skipped (backlog) ${skipped}${target}`,
      );
    }
  } finally {
    await Promise.all(servers.map(stopServer));
    rmSync(dir, { recursive: true, force: true });
  }
}

/** This process's CPU time (user + system) in microseconds. */
function cpuUs(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

/** The three sides' decision pipelines in this process: decisions per CPU second, interleaved rounds, medians. */
async function inProcess(f: Fixture, candidate: string): Promise<void> {
  const logger = pino({ level: "info" }, new Writable({ write: (_chunk, _enc, done) => done() }));
  const services: RunningService[] = [];
  try {
    for (const side of SIDES) {
      const extra = side.target === undefined ? [] : ["--shadow-bundle", candidate, ...side.extra];
      const args = serveArgs(f, extra)
        .slice(1)
        .filter((a) => a !== "{port}" && a !== "--port");
      services.push(await startService(loadConfig(args), { logger, listen: false }));
    }
    let n = 0;
    /** Decisions for `ms` of wall time, 32 at a time, each batch's deferred shadow work let run; per CPU second. */
    const rate = async (s: RunningService, ms: number): Promise<number> => {
      let count = 0;
      const end = performance.now() + ms;
      const cpu0 = cpuUs();
      while (performance.now() < end) {
        const batch: Promise<unknown>[] = [];
        for (let i = 0; i < 32; i++, n++) {
          const path = PATH_TEMPLATE.replace("{id}", `p${n}`);
          batch.push(s.decide({ method: "GET", path, token: f.tokens[n % f.tokens.length] }, "forward-auth"));
        }
        await Promise.all(batch);
        await new Promise((resolve) => setImmediate(resolve));
        count += 32;
      }
      return (count * 1e6) / Math.max(cpuUs() - cpu0, 1);
    };
    for (const s of services) await rate(s, 300);
    const rates = SIDES.map(() => [] as number[]);
    const rounds = Number(process.env.BENCH_IN_PROCESS_ROUNDS ?? 7);
    for (let r = 0; r < rounds; r++)
      for (let k = 0; k < SIDES.length; k++) {
        const i = (k + r) % SIDES.length;
        rates[i]!.push(await rate(services[i]!, 300));
      }
    const base = median(rates[0]!);
    console.log(`shadow, in process: the decision pipeline, ${rounds} interleaved rounds, decisions per CPU second`);
    for (let i = 0; i < SIDES.length; i++) {
      const r = median(rates[i]!);
      const extraUs = 1e6 / r - 1e6 / base;
      console.log(
        `  ${SIDES[i]!.name.padEnd(28)} ${fmt(r).padStart(9)}  ratio ${(r / base).toFixed(3)}  ` +
          `+${extraUs.toFixed(1)} us CPU per decision`,
      );
    }
  } finally {
    await Promise.all(services.map((s) => s.close(1000)));
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
