/**
 * Latency under a fixed request rate (issue 20 item 3), not at saturation: p50/p99/p99.9 at BENCH_LATENCY_RATES
 * (default 100, 1,000 and 5,000 requests/s) for Portier's GET /forward-auth/nginx and POST /decide (one worker,
 * decision log on to /dev/null, 100 users' tokens in turn, path ids never repeating), the same-shaped server and
 * Portier's gRPC Check. The load is open-loop, so a slow answer does not hold back the requests behind it (no
 * coordinated omission): HTTP from vegeta (Go, pinned in tools/ensure-vegeta.sh; one target per request, from a
 * file of unique requests; up to 256 requests in flight, so the schedule holds through a stall of 256 requests'
 * time), gRPC from ghz --async --rps (tools/ensure-ghz.sh). Every latency is kept and the
 * percentiles computed here (nearest rank); a rate counts as sustained when the answers came at >= 95% of it with
 * no errors. The servers start once; each measurement is BENCH_LATENCY_SECONDS (5), or long enough for 1,000
 * requests (10 s at 100/s), after a wrk warm-up.
 * Run: make build && npx tsx test/bench/latency.ts (part of make bench); BENCH_LATENCY_TARGETS="gRPC;/decide" keeps
 * the targets whose names contain one of those parts.
 */
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  checkRequests,
  createFixture,
  decideLoad,
  forwardAuthLoad,
  ghzCheckArgs,
  PATH_TEMPLATE,
  ROOT,
  serveArgs,
  shapeOf,
  SHAPED,
  startNode,
  stopServer,
  type Fixture,
  type Server,
} from "./fixture.js";
import { freePort } from "../support/free-port.js";
import { haveWrk, runWrk, type Load } from "./wrk.js";
import { pinned, placement } from "./pin.js";

const SECONDS = Number(process.env.BENCH_LATENCY_SECONDS ?? 5);
/** At least this many requests per measurement, so that p99.9 is not simply the maximum (10 s at 100/s). */
const MIN_REQUESTS = 1000;
/** How long a measurement at `rate` runs: BENCH_LATENCY_SECONDS, or longer for MIN_REQUESTS. */
export const secondsAt = (rate: number, seconds = SECONDS): number => Math.max(seconds, Math.ceil(MIN_REQUESTS / rate));
const RATES = (process.env.BENCH_LATENCY_RATES ?? "100,1000,5000").split(",").map(Number);
/** A rate is sustained when answers came at least at this fraction of it. */
const SUSTAINED = 0.95;

/** The q-th percentile (0 < q <= 100) of ascending values, by nearest rank; NaN when there are none. */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  // q% of n in floating point can land a hair above a whole rank (0.999 * 1000 = 999.0000000000001): round first.
  const rank = Math.ceil(Math.round((q / 100) * sorted.length * 1e6) / 1e6);
  return sorted[Math.min(Math.max(rank, 1), sorted.length) - 1]!;
}

export interface LatencySummary {
  target: number;
  /** Answers (of any status) per second over the run, from the first request sent to the last answer. */
  achieved: number;
  requests: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
  sustained: boolean;
  /** The share of the machine's CPU time the hypervisor took (steal, /proc/stat) while this rate ran. */
  steal?: number;
}

/** One attempt: when it was sent (ms since any epoch), how long it took (ms), and whether it failed. */
export interface Attempt {
  startMs: number;
  latencyMs: number;
  ok: boolean;
}

/** Percentiles over every attempt (failed ones included: a fast error is still an answer a caller waits for). */
export function summarise(attempts: readonly Attempt[], target: number): LatencySummary {
  const sorted = attempts.map((a) => a.latencyMs).sort((a, b) => a - b);
  const first = Math.min(...attempts.map((a) => a.startMs));
  const last = Math.max(...attempts.map((a) => a.startMs + a.latencyMs));
  const span = (last - first) / 1000;
  const achieved = attempts.length > 1 && span > 0 ? attempts.length / span : 0;
  const errors = attempts.filter((a) => !a.ok).length;
  return {
    target,
    achieved,
    requests: attempts.length,
    errors,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    p999Ms: percentile(sorted, 99.9),
    maxMs: sorted.length > 0 ? sorted[sorted.length - 1]! : NaN,
    sustained: errors === 0 && achieved >= SUSTAINED * target,
  };
}

/** vegeta's JSON targets (one per line), `count` requests of the load with ids from `start` up, never repeating. */
export function vegetaTargets(base: string, load: Load, count: number, start: number): string {
  const [pre, post] = load.pathTemplate.split("{id}") as [string, string | undefined];
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const v = load.variants[i % load.variants.length]!;
    const path = `${pre}${load.unique ? start + i : 42}${post ?? ""}`;
    const header = Object.fromEntries(
      Object.entries(v.headers).map(([k, val]) => [k, [val.replace("__PATH__", path)]]),
    );
    const target: Record<string, unknown> = { method: load.method, url: `${base}${load.target}`, header };
    if (v.body !== undefined) target.body = Buffer.from(v.body.replace("__PATH__", path)).toString("base64");
    lines.push(JSON.stringify(target));
  }
  return `${lines.join("\n")}\n`;
}

/** `vegeta encode -to json` lines: timestamp (RFC 3339), latency (ns), code, error. */
export function vegetaAttempts(jsonLines: string): Attempt[] {
  const out: Attempt[] = [];
  for (const line of jsonLines.split("\n")) {
    if (!line.trim()) continue;
    const r = JSON.parse(line) as { timestamp: string; latency: number; code: number; error: string };
    out.push({
      startMs: Date.parse(r.timestamp),
      latencyMs: r.latency / 1e6,
      ok: r.code >= 200 && r.code < 400 && !r.error,
    });
  }
  return out;
}

function tool(script: string): string | undefined {
  const r = spawnSync("bash", [join(ROOT, "tools", script)], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/** The machine's CPU time in ticks (/proc/stat's first line): all of it, and what the hypervisor took (steal). */
function cpuTicks(): { total: number; steal: number } {
  try {
    const fields = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal [guest guest_nice: already in user and nice]
    return { total: fields.slice(0, 8).reduce((a, b) => a + b, 0), steal: fields[7] ?? 0 };
  } catch {
    return { total: 0, steal: 0 };
  }
}

const WAKE_UPS = 500;

/**
 * How late a thread that sleeps 1 ms wakes up, in ms (the kernel's timer and the scheduler, or the hypervisor
 * waking an idle virtual CPU): the floor under every latency measured at a fixed rate on this machine.
 */
export function wakeUpOvershoot(): { p50: number; p99: number; max: number } {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  const late: number[] = [];
  for (let i = 0; i < WAKE_UPS; i++) {
    const t0 = process.hrtime.bigint();
    Atomics.wait(cell, 0, 0, 1);
    late.push(Number(process.hrtime.bigint() - t0) / 1e6 - 1);
  }
  late.sort((a, b) => a - b);
  const at = (q: number) => late[Math.min(late.length - 1, Math.ceil(q * late.length) - 1)]!;
  return { p50: at(0.5), p99: at(0.99), max: late[late.length - 1]! };
}

async function run(cmd: string, args: string[]): Promise<string> {
  const [bin, argv] = pinned("client", cmd, args);
  const child = spawn(bin, argv, { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  const [code] = (await once(child, "exit")) as [number | null];
  if (code !== 0) throw new Error(`${cmd} ${args.slice(0, 3).join(" ")} ... exited with ${code}`);
  return out;
}

async function vegeta(
  bin: string,
  base: string,
  load: Load,
  rate: number,
  start: number,
  dir: string,
): Promise<Attempt[]> {
  const targets = join(dir, "targets.jsonl");
  const results = join(dir, "results.bin");
  writeFileSync(targets, vegetaTargets(base, load, Math.ceil(rate * secondsAt(rate) * 1.1) + 10, start));
  await run(bin, [
    "attack",
    "-format=json",
    `-targets=${targets}`,
    `-rate=${rate}/1s`,
    `-duration=${secondsAt(rate)}s`,
    "-timeout=10s",
    // Workers (each with its connection) start at 4 and grow as answers lag, up to 256: unbounded, a stall on this
    // 2-core machine made vegeta open connections by the thousand and fall far behind its own schedule.
    "-workers=4",
    "-max-workers=256",
    `-output=${results}`,
  ]);
  const encoded = await run(bin, ["encode", "-to", "json", results]);
  rmSync(targets, { force: true });
  rmSync(results, { force: true });
  return vegetaAttempts(encoded);
}

/** ghz --async at a fixed rate: the CheckRequests Envoy sends, tokens in turn, ids never repeating. */
async function ghz(
  bin: string,
  address: string,
  f: Fixture,
  rate: number,
  start: number,
  dir: string,
): Promise<Attempt[]> {
  const spec = join(dir, "check.json");
  const path = PATH_TEMPLATE.replace("{id}", `${start}-{{.RequestNumber}}`);
  writeFileSync(spec, JSON.stringify(checkRequests(f.tokens, path)));
  const out = await run(
    bin,
    ghzCheckArgs(address, spec, [
      "--async",
      "--rps",
      String(rate),
      "-c",
      "20",
      "--connections",
      "1",
      "-z",
      `${secondsAt(rate)}s`,
    ]),
  );
  const r = JSON.parse(out) as {
    details: { timestamp: string; latency: number; error: string; status: string }[] | null;
  };
  // The calls still in flight when the duration ends fail as ghz closes its connection: not the server's.
  return (r.details ?? [])
    .filter((d) => !/transport is closing|Canceled/i.test(d.error))
    .map((d) => ({ startMs: Date.parse(d.timestamp), latencyMs: d.latency / 1e6, ok: d.status === "OK" }));
}

interface Row {
  name: string;
  results: LatencySummary[];
}

export async function main(): Promise<void> {
  if (!existsSync(join(ROOT, "dist", "cli", "main.js"))) throw new Error("dist/ is missing: run make build first");
  if (!haveWrk()) throw new Error("wrk is not installed (it warms the servers up): apt-get install -y wrk");
  const vegetaBin = tool("ensure-vegeta.sh");
  if (!vegetaBin) throw new Error("vegeta is not built (needs Go): bash tools/ensure-vegeta.sh");
  const ghzBin = tool("ensure-ghz.sh");
  const f = await createFixture();
  const servers: Server[] = [];
  try {
    const grpcPort = await freePort();
    const portier = await startNode(
      "Portier",
      [],
      join(ROOT, "dist", "cli", "main.js"),
      serveArgs(f, ["--grpc-port", String(grpcPort)]),
      {
        readyPath: "/ready",
      },
    );
    servers.push(portier);
    const shaped = await startNode("same-shaped server", [], SHAPED, ["{port}"], {
      readyPath: "/",
      env: { BENCH_SHAPE: await shapeOf(portier.url, f) },
    });
    servers.push(shaped);
    const targets: { name: string; at: (rate: number, start: number) => Promise<Attempt[]>; warm?: [Server, Load] }[] =
      [
        {
          name: "Portier /forward-auth/nginx",
          at: (rate, start) => vegeta(vegetaBin, portier.url, forwardAuthLoad(f), rate, start, f.dir),
          warm: [portier, forwardAuthLoad(f)],
        },
        {
          name: "Portier POST /decide",
          at: (rate, start) => vegeta(vegetaBin, portier.url, decideLoad(f), rate, start, f.dir),
          warm: [portier, decideLoad(f)],
        },
        {
          name: "same-shaped server, forward-auth shape",
          at: (rate, start) => vegeta(vegetaBin, shaped.url, forwardAuthLoad(f), rate, start, f.dir),
          warm: [shaped, forwardAuthLoad(f)],
        },
      ];
    if (ghzBin)
      targets.push({
        name: "Portier gRPC Check",
        at: (rate, start) => ghz(ghzBin, `127.0.0.1:${grpcPort}`, f, rate, start, f.dir),
      });
    else console.log("ghz is not built (needs Go): the gRPC Check row is left out");
    const only = process.env.BENCH_LATENCY_TARGETS?.split(";").filter(Boolean);
    if (only) targets.splice(0, targets.length, ...targets.filter((t) => only.some((o) => t.name.includes(o))));
    let idStart = 1_000_000;
    for (const t of targets)
      if (t.warm)
        await runWrk(t.warm[0].url, t.warm[1], {
          connections: 10,
          seconds: 2,
          start: (idStart += 10_000_000),
          scriptFile: join(f.dir, "warm.lua"),
        });
    const grpc = targets.find((t) => t.name.includes("gRPC"));
    if (grpc) await grpc.at(500, (idStart += 10_000_000)); // warm-up
    console.log(
      `Open-loop constant rate (vegeta for HTTP, ghz --async --rps for gRPC), ${SECONDS} s per rate and target (at ` +
        `least ${MIN_REQUESTS.toLocaleString("en")} requests), path ids never repeating; latency percentiles by ` +
        `nearest rank over every request:`,
    );
    const rows: Row[] = targets.map((t) => ({ name: t.name, results: [] }));
    const load0 = loadavg()[0]!;
    for (const rate of RATES)
      for (let i = 0; i < targets.length; i++) {
        const before = cpuTicks();
        const s = summarise(await targets[i]!.at(rate, (idStart += 10_000_000)), rate);
        const after = cpuTicks();
        s.steal = (after.steal - before.steal) / Math.max(1, after.total - before.total);
        rows[i]!.results.push(s);
      }
    const load1 = loadavg()[0]!;
    report(rows);
    const wake = wakeUpOvershoot();
    console.log(
      `\nThis machine's wake-up floor: a thread sleeping 1 ms (Atomics.wait) wakes late ` +
        `by ${wake.p50.toFixed(2)} ms (p50), ${wake.p99.toFixed(2)} ms (p99), ${wake.max.toFixed(2)} ms (max) ` +
        `over ${WAKE_UPS} sleeps; a request at a fixed rate waits for up to three such wake-ups (the generator's ` +
        `timer, the server, the generator's socket), so no p99 here can be below the sleep's.`,
    );
    console.log(
      `\nLoad average: ${load0.toFixed(1)} at the start, ${load1.toFixed(1)} at the end, ` +
        `on ${availableParallelism()} cores (the load generator runs on the same cores); ${placement()}.`,
    );
  } finally {
    await Promise.all(servers.map(stopServer));
    rmSync(f.dir, { recursive: true, force: true });
  }
}

function report(rows: Row[]): void {
  const ms = (x: number) => (Number.isNaN(x) ? "-" : `${x.toFixed(2)} ms`);
  console.log("");
  console.log("| target | rate (req/s) | achieved | p50 | p99 | p99.9 | max | steal |");
  console.log("|---|---|---|---|---|---|---|---|");
  for (const row of rows)
    for (const s of row.results) {
      const note = `${s.sustained ? "" : " **not sustained**"}${s.errors ? ` (${s.errors} errors)` : ""}`;
      console.log(
        `| ${row.name} | ${s.target.toLocaleString("en")} | ${Math.round(s.achieved).toLocaleString("en")}${note} | ` +
          `${ms(s.p50Ms)} | ${ms(s.p99Ms)} | ${ms(s.p999Ms)} | ${ms(s.maxMs)} | ` +
          `${s.steal === undefined ? "-" : `${(s.steal * 100).toFixed(1)}%`} |`,
      );
    }
  const fa = rows.find((r) => r.name === "Portier /forward-auth/nginx")?.results.find((s) => s.target === 1000);
  if (fa)
    console.log(
      `\nIssue 20 target: p99 under 1 ms at 1,000 requests/s ` +
        `(/forward-auth/nginx): ${ms(fa.p99Ms)}, ${fa.sustained && fa.p99Ms < 1 ? "met" : "**not met**"}. ` +
        `OPA-Envoy's published gRPC handler figures: p99 1.5 ms at 100 req/s, 3.0 ms at 1,000.`,
    );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
