/**
 * Instructions per request, counted rather than timed (issue 20): this 2-core VM's hypervisor steals 0.5-20% of
 * a core and stalls for 15-20 ms, so two runs of the same code over HTTP differ by ±5% in CPU time, more than most
 * changes. Valgrind's callgrind counts the instructions a process executes: the same code counted twice read
 * 1.007x. Counts are steadier than time, not independent of it (the collector's steps and the requests read per
 * wake-up follow the timing; a test suite run beside one count moved it by up to +55%): count on a quiet machine.
 * Each server runs under `valgrind --tool=callgrind` (node's JIT code included: --smc-check=all-non-file), driven
 * over HTTP by wrk with the service benchmark's requests (fixture.ts: 100 users' tokens in turn, path ids never
 * repeating), GET /forward-auth/nginx and POST /decide. After a warm-up (the JIT settles), each round zeroes the
 * counters (`callgrind_control -z`), runs wrk, and dumps them (`-d`): the dump's total over the requests wrk
 * completed is the round's instructions per request, split by CATEGORIES (below). Medians of the rounds, V8's
 * compilers left out (warm-up work) and counted.
 * What it does not count: the kernel (the socket's TCP path, wake-ups: a quarter of the same-shaped server's CPU
 * in the perf profile) and what instructions cost (cache misses, stalls): it is a steadier measure beside
 * `make profile`'s CPU time, not a replacement for it.
 * Servers: the same-shaped server and Portier from this tree's dist/; with BENCH_BASE=<ref>, also Portier at that
 * commit (compiled like hot-path.ts's base; BENCH_BASE=HEAD and the BENCH_BEFORE_/BENCH_AFTER_ settings of
 * fixture.ts's sideSettings compare one code under two settings). `@collector` in a side's ARGS is the URL of a
 * decision-log collector this process runs (it reads each upload and answers 204): shipping against the stdout line
 * is BENCH_BASE=HEAD BENCH_AFTER_ARGS="--decision-log-url @collector --no-decision-log-stdout"; in a side's ENV it
 * is the collector's origin (an OTLP endpoint: BENCH_AFTER_ENV="OTEL_EXPORTER_OTLP_ENDPOINT=@collector").
 * Run: make build && npx tsx test/bench/instructions.ts (INSTR_WARM_UP=60 s not instrumented, INSTR_SETTLE=40 s
 * instrumented, then INSTR_ROUNDS=5 rounds of INSTR_SECONDS=10 s; INSTR_LOADS="/forward-auth;/decide";
 * INSTR_SAME_SHAPED=0 leaves the same-shaped server out). About 3 minutes per server and load.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  compiledBase,
  createFixture,
  decideLoad,
  forwardAuthLoad,
  ROOT,
  serveArgs,
  shapeOf,
  SHAPED,
  sideSettings,
  startCollector,
  startNode,
  startServer,
  stopServer,
  type Fixture,
  type Server,
} from "./fixture.js";
import { median } from "./measure.js";
import { haveWrk, runWrk, type Load } from "./wrk.js";

const WARM_UP = Number(process.env.INSTR_WARM_UP ?? 60);
const SECONDS = Number(process.env.INSTR_SECONDS ?? 10);
const SETTLE = Number(process.env.INSTR_SETTLE ?? 40);
const ROUNDS = Number(process.env.INSTR_ROUNDS ?? 5);
const LOADS = (process.env.INSTR_LOADS ?? "/forward-auth;/decide").split(";");

/**
 * What an instruction was spent on: V8's compilers and collector by the function callgrind names, the rest by
 * the object the code lives in (`ob=`): node's binary (V8's runtime and builtins, llhttp, libuv), the JIT's code
 * (JS and wasm; callgrind names it by address only), libc.
 */
export const CATEGORIES = [
  "V8 compilers (still optimising)",
  "garbage collector",
  "node (V8 runtime and builtins, llhttp, libuv)",
  "JIT code (JS, wasm)",
  "libc",
  "other",
] as const;
const COMPILER = new RegExp(
  String.raw`v8::internal::(compiler|maglev|baseline|wasm)::|v8::internal::(Compiler|` +
    String.raw`OptimizingCompileDispatcher|Parser|` +
    String.raw`Deoptimizer|Scanner|BytecodeGenerator)`,
);
const COLLECTOR = new RegExp(
  String.raw`v8::internal::(Heap|Scavenger|Scavenging|MarkCompact|Marking|MinorMarkSweep|` +
    String.raw`ConcurrentMarking|Sweeper|Evacuat|` +
    String.raw`GCTracer|MemoryAllocator|PagedSpace|SemiSpace|NewSpace|MemoryChunk|RememberedSet|SlotSet|TypedSlot|` +
    String.raw`PointersUpdating|IncrementalMarking|LocalHeap|Safepoint|WeakObjects|GlobalHandles|` +
    String.raw`MainMarkingVisitor|YoungGeneration)`,
);

export function categoryOf(ob: string, fn: string): (typeof CATEGORIES)[number] {
  if (COMPILER.test(fn)) return CATEGORIES[0];
  if (COLLECTOR.test(fn)) return CATEGORIES[1];
  if (/\/node$|\/nodejs$/.test(ob)) return CATEGORIES[2];
  if (ob === "" || ob === "???" || fn === "(JIT code)") return CATEGORIES[3];
  if (/\/libc\.so|\/libc-/.test(ob)) return CATEGORIES[4];
  return CATEGORIES[5];
}

export interface Counted {
  total: number;
  /** Self instructions by CATEGORIES. */
  byCategory: Map<string, number>;
  /** Self instructions by function (callgrind's name; JIT code has none: "0x..." addresses are summed as one). */
  byFunction: Map<string, number>;
}

/**
 * Reads one callgrind dump written with --compress-strings=no and --compress-pos=no: `totals:`, and each cost
 * line's Ir added to its category and function (self cost); the cost line after a `calls=` line is the call's
 * inclusive cost and is skipped.
 */
export function readCallgrind(text: string): Counted {
  const byCategory = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  let ob = "";
  let fn = "";
  let skipNext = false;
  for (const line of text.split("\n")) {
    if (line.startsWith("ob=")) ob = line.slice(3);
    else if (line.startsWith("fn=")) fn = /^0x[0-9a-f]+('\d+)?$/.test(line.slice(3)) ? "(JIT code)" : line.slice(3);
    else if (line.startsWith("calls=")) skipNext = true;
    else if (line.startsWith("totals:")) total = Number(line.slice(7).trim());
    else if (/^[0-9+*-]/.test(line)) {
      if (skipNext) {
        skipNext = false;
        continue;
      }
      const ir = Number(line.slice(line.lastIndexOf(" ") + 1));
      if (!Number.isFinite(ir)) continue;
      const cat = categoryOf(ob, fn);
      byCategory.set(cat, (byCategory.get(cat) ?? 0) + ir);
      byFunction.set(fn, (byFunction.get(fn) ?? 0) + ir);
    }
  }
  return { total, byCategory, byFunction };
}

interface Measured {
  label: string;
  /** Median of the rounds' instructions per request, all counted. */
  perRequest: number;
  /** Median of the rounds' instructions per request without V8's compilers (warm-up work a long run amortises). */
  steady: number;
  rounds: { all: number; steady: number }[];
  /** Requests answered in the warm-up, before the counting. */
  warmUpRequests: number;
  /** Instructions per request by CATEGORIES, from the round of the median `steady`. */
  byCategory: Map<string, number>;
  top: [string, number][];
}

function control(pid: number, flag: string): void {
  execFileSync("callgrind_control", [...flag.split(" "), String(pid)], { stdio: "ignore" });
}

/** The newest dump of `prefix`.<pid>.<n>. */
function newestDump(dir: string, prefix: string): string {
  const parts = readdirSync(dir)
    .filter((f) => f.startsWith(`${prefix}.`) && /\.\d+\.\d+$/.test(f))
    .sort((a, b) => Number(a.slice(a.lastIndexOf(".") + 1)) - Number(b.slice(b.lastIndexOf(".") + 1)));
  if (parts.length === 0) throw new Error(`no callgrind dump for ${prefix} in ${dir}`);
  return join(dir, parts[parts.length - 1]!);
}

async function measure(label: string, start: () => Promise<Server>, load: Load, f: Fixture, key: string) {
  const server = await start();
  const scriptFile = join(f.dir, "load.lua");
  const pid = server.child.pid!;
  try {
    const warm = await runWrk(server.url, load, { connections: 10, seconds: WARM_UP, start: 1, scriptFile });
    // Instrumented, V8's optimising compiler runs again for a while (seen: 50k instructions per request in the
    // first 10 s, none after 40 s): let it settle before counting.
    control(pid, "-i on");
    await runWrk(server.url, load, {
      connections: 10,
      seconds: SETTLE,
      start: 50_000_000,
      scriptFile,
      timeoutSeconds: 60,
    });
    const rounds: { all: number; steady: number; c: Counted; requests: number }[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      control(pid, "-z");
      const r = await runWrk(server.url, load, {
        connections: 10,
        seconds: SECONDS,
        start: (i + 1) * 100_000_000,
        scriptFile,
        timeoutSeconds: 60,
      });
      control(pid, "-d");
      if (r.bad > 0) throw new Error(`${label}: ${r.bad} errors or non-2xx answers`);
      const c = readCallgrind(readFileSync(newestDump(f.dir, key), "utf8"));
      const compiling = c.byCategory.get(CATEGORIES[0]) ?? 0;
      rounds.push({ all: c.total / r.requests, steady: (c.total - compiling) / r.requests, c, requests: r.requests });
    }
    const steady = median(rounds.map((r) => r.steady));
    const mid = rounds.find((r) => r.steady === steady)!;
    const perRound = (m: Map<string, number>) => new Map([...m].map(([name, n]) => [name, n / mid.requests]));
    return {
      label,
      perRequest: median(rounds.map((r) => r.all)),
      steady,
      rounds: rounds.map(({ all, steady }) => ({ all, steady })),
      warmUpRequests: warm.requests,
      byCategory: perRound(mid.c.byCategory),
      top: [...perRound(mid.c.byFunction)].sort((x, y) => y[1] - x[1]).slice(0, 15),
    } satisfies Measured;
  } finally {
    await stopServer(server);
  }
}

const k = (n: number) => `${(n / 1000).toFixed(1)}k`;

export async function main(): Promise<void> {
  if (!haveWrk()) {
    console.log("wrk is not installed (apt-get install wrk): instruction counts skipped");
    return;
  }
  if (spawnSync("valgrind", ["--version"]).error) {
    console.log("valgrind is not installed (apt-get install valgrind): instruction counts skipped");
    return;
  }
  const f = await createFixture();
  const collector = await startCollector();
  const baseRef = process.env.BENCH_BASE;
  const base = baseRef ? compiledBase(baseRef) : undefined;
  try {
    const mainJs = join(ROOT, "dist", "cli", "main.js");
    const probe = await startNode("Portier", [], mainJs, serveArgs(f), { readyPath: "/ready" });
    const shape = await shapeOf(probe.url, f).finally(() => stopServer(probe));
    const valgrind = (key: string) => [
      "--tool=callgrind",
      "--smc-check=all-non-file",
      "--compress-strings=no",
      "--compress-pos=no",
      // Not instrumented until the warm-up is over (about 5x faster than instrumented, so the JIT settles sooner).
      "--instr-atstart=no",
      `--callgrind-out-file=${join(f.dir, key)}.%p`,
      `--log-file=${join(f.dir, key)}.log`,
    ];
    interface Counting {
      label: string;
      argv: (key: string) => string[];
      readyPath: string;
      env: Record<string, string>;
    }
    const portier = (label: string, root: string, side: "before" | "after"): Counting => {
      const { nodeFlags, bundle, ...settings } = sideSettings(side);
      const args = settings.args.map((a) => a.replace("@collector", collector.url));
      const env = Object.fromEntries(
        Object.entries(settings.env).map(([k, v]) => [k, v.replace("@collector", collector.origin)]),
      );
      const serve = [join(root, "dist", "cli", "main.js"), ...serveArgs(f, args, { bundle })];
      return {
        label,
        argv: (key) => [...valgrind(key), process.execPath, ...nodeFlags, ...serve],
        readyPath: "/ready",
        env,
      };
    };
    const servers: Counting[] = [
      {
        label: "same-shaped server",
        argv: (key) => [...valgrind(key), process.execPath, SHAPED, "{port}"],
        readyPath: "/",
        env: { BENCH_SHAPE: shape },
      },
      ...(base ? [portier(`Portier ${baseRef}`, base, "before")] : []),
      portier("Portier", ROOT, "after"),
    ];
    const load0 = loadavg()[0]!;
    const results: Measured[] = [];
    for (const [loadName, load] of [
      ["/forward-auth", forwardAuthLoad(f)],
      ["/decide", decideLoad(f)],
    ] as const) {
      if (!LOADS.includes(loadName)) continue;
      for (const [i, s] of servers.entries()) {
        if (s.label === "same-shaped server" && process.env.INSTR_SAME_SHAPED === "0") continue;
        const key = `callgrind-${i}-${loadName.slice(1)}`;
        const label = `${s.label}, ${loadName}`;
        const start = () => startServer(label, "valgrind", s.argv(key), { readyPath: s.readyPath, env: s.env });
        const m = await measure(label, start, load, f, key);
        console.log(
          `${label}: ${m.rounds.map((r) => `${k(r.all)} (${k(r.steady)} without compiling)`).join(", ")} ` +
            `instructions per request (rounds, after ${m.warmUpRequests} requests of warm-up)`,
        );
        results.push(m);
      }
    }
    const load1 = loadavg()[0]!;
    console.log(`\n| instructions per request (callgrind) | ${results.map((r) => r.label).join(" | ")} |`);
    console.log(`|---|${results.map(() => "---").join("|")}|`);
    for (const c of CATEGORIES)
      console.log(`| ${c} | ${results.map((r) => k(r.byCategory.get(c) ?? 0)).join(" | ")} |`);
    console.log(`| all (median of the rounds) | ${results.map((r) => k(r.perRequest)).join(" | ")} |`);
    console.log(`| **without the compilers** (median) | ${results.map((r) => `**${k(r.steady)}**`).join(" | ")} |`);
    for (const loadName of LOADS) {
      const rows = results.filter((r) => r.label.endsWith(loadName));
      if (rows.length === 0) continue;
      const shaped = rows.find((r) => r.label.startsWith("same-shaped"));
      for (const r of rows.filter((x) => x !== shaped))
        if (shaped)
          console.log(
            `${r.label}: ${(shaped.steady / r.steady).toFixed(3)}x the same-shaped server by requests per ` +
              `instruction (compilers left out; ${(shaped.perRequest / r.perRequest).toFixed(3)}x all counted)`,
          );
      if (base) {
        const before = rows.find((r) => r.label.startsWith(`Portier ${baseRef}`))!;
        const after = rows.find((r) => r.label === `Portier, ${loadName}`)!;
        console.log(
          `Portier ${loadName}: after / before ${(after.steady / before.steady).toFixed(3)}x instructions per ` +
            `request (compilers left out; ${(after.perRequest / before.perRequest).toFixed(3)}x all counted)`,
        );
      }
    }
    for (const r of results.filter((x) => x.label.startsWith("Portier"))) {
      console.log(`\n${r.label}: the functions that execute most (instructions per request, self)`);
      for (const [fn, n] of r.top) console.log(`  ${k(n).padStart(7)}  ${fn}`);
    }
    console.log(
      `\nLoad average: ${load0.toFixed(1)} at the start, ${load1.toFixed(1)} at the end, ` +
        `on ${availableParallelism()} cores (counts move much less with the load than CPU time, but they do: the ` +
        `collector and the batching of requests per wake-up follow the timing; count on a quiet machine).`,
    );
  } finally {
    collector.server.close();
    rmSync(f.dir, { recursive: true, force: true });
    if (base) rmSync(base, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
