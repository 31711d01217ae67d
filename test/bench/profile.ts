/**
 * `make profile`: a whole-system profile of Portier `serve` (from dist/, one worker, decision log on to /dev/null)
 * and of the same-shaped server, each under wrk with the service benchmark's requests (GET /forward-auth/nginx and
 * POST /decide, 100 users' tokens in turn, path ids never repeating), a fresh server per load. Where perf can
 * record, `perf record -e cpu-clock -g` samples the server's process (kernel, native and JS frames in one stack:
 * node runs with --perf-basic-prof); where it cannot, that is printed and the JS side comes from node --cpu-prof
 * instead (its profile also holds the start-up and the warm-up). Writes, per server and load, the folded stacks
 * and a flame graph (flamegraph.pl from Debian's libdevel-nytprof-perl) under build/profile/, the /forward-auth
 * ones also under docs/profile/, and prints a cost table: CPU microseconds per request by category (stacks.ts),
 * the total from /proc as the service benchmark measures it.
 * Run: make profile, or npx tsx test/bench/profile.ts [--base <git rev>] (PROFILE_BASE=<rev> also works; the base
 * commit's src/ is compiled and profiled beside this tree, on this tree's bundle). PROFILE_ROUNDS=3 interleaved
 * rounds (order rotating) of PROFILE_SECONDS=3 profiled per server and load, each after a 3 s warm-up, samples and
 * CPU summed over the rounds; PROFILE_CONNECTIONS=10; PROFILE_PERF=0 forces the --cpu-prof fallback.
 */
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
  startNode,
  stopServer,
  type Fixture,
  type Server,
} from "./fixture.js";
import {
  CATEGORIES,
  costTable,
  foldCpuProfile,
  foldedText,
  foldPerfScript,
  mergeFolded,
  type CostRow,
  type Folded,
} from "./stacks.js";
import { haveWrk, runWrk, treeCpuSeconds, type Load } from "./wrk.js";

const SECONDS = Number(process.env.PROFILE_SECONDS ?? 3);
const ROUNDS = Number(process.env.PROFILE_ROUNDS ?? 3);
/** Seconds of load before the profiled window: the JIT's optimising compiles mostly done (they still show). */
const WARM_UP = 3;
const CONNECTIONS = Number(process.env.PROFILE_CONNECTIONS ?? 10);
export const FLAMEGRAPH = process.env.FLAMEGRAPH ?? "/usr/share/perl5/Devel/NYTProf/flamegraph.pl";
export const OUT = join(ROOT, "build", "profile");
const DOCS = join(ROOT, "docs", "profile");

/** True when `perf record -e cpu-clock -g` works here (installed, and allowed by perf_event_paranoid). */
function perfWorks(): { ok: boolean; why: string } {
  if (process.env.PROFILE_PERF === "0") return { ok: false, why: "PROFILE_PERF=0" };
  const probe = join(OUT, "probe.data");
  const r = spawnSync("perf", ["record", "-q", "-e", "cpu-clock", "-g", "-o", probe, "--", "true"], {
    encoding: "utf8",
  });
  rmSync(probe, { force: true });
  if (r.error) return { ok: false, why: "perf is not installed (Debian: apt-get install linux-perf)" };
  if (r.status !== 0) return { ok: false, why: `perf record failed: ${(r.stderr || "").trim().split("\n")[0]}` };
  return { ok: true, why: "" };
}

interface Subject {
  key: string;
  label: string;
  /** Portier's compiled tree, or undefined for the same-shaped server. */
  root?: string;
}

interface Profiled {
  subject: Subject;
  loadName: string;
  rows: CostRow[];
  cpuUs: number;
  rps: number;
  samples: number;
  bad: number;
}

/** One server under one load: warm-up, then wrk for SECONDS with perf attached (or the --cpu-prof fallback). */
async function profileOne(
  s: Subject,
  loadName: string,
  load: Load,
  f: Fixture,
  shape: string,
  perf: boolean,
  idStart: number,
): Promise<{ folded: Folded; cpu: number; requests: number; seconds: number; bad: number }> {
  const cpuProfDir = join(f.dir, `cpuprof-${s.key}-${loadName}`);
  const nodeArgs = perf
    ? ["--perf-basic-prof", "--interpreted-frames-native-stack"]
    : [
        "--cpu-prof",
        `--cpu-prof-dir=${cpuProfDir}`,
        // node writes the profile when the process exits; the same-shaped server has no SIGTERM handler of its own.
        ...(s.root ? [] : ["--import", 'data:text/javascript,process.once("SIGTERM",()=>process.exit(0))']),
      ];
  const server: Server = s.root
    ? await startNode(s.label, nodeArgs, join(s.root, "dist", "cli", "main.js"), serveArgs(f), {
        readyPath: "/ready",
        cwd: s.root,
      })
    : await startNode(s.label, nodeArgs, SHAPED, ["{port}"], { readyPath: "/", env: { BENCH_SHAPE: shape } });
  const pid = server.child.pid!;
  const scriptFile = join(f.dir, "load.lua");
  const perfData = join(f.dir, `${s.key}-${loadName}.data`);
  try {
    await runWrk(server.url, load, { connections: CONNECTIONS, seconds: WARM_UP, start: idStart, scriptFile });
    let recorder: ReturnType<typeof spawn> | undefined;
    if (perf) {
      recorder = spawn(
        "perf",
        ["record", "-q", "-e", "cpu-clock", "-F", "999", "-g", "-p", String(pid), "-o", perfData],
        {
          stdio: ["ignore", "ignore", "inherit"],
        },
      );
      await new Promise((r) => setTimeout(r, 300)); // perf attaches
    }
    const cpu0 = treeCpuSeconds(pid);
    const r = await runWrk(server.url, load, {
      connections: CONNECTIONS,
      seconds: SECONDS,
      start: idStart + 10_000_000,
      scriptFile,
    });
    const cpu = treeCpuSeconds(pid) - cpu0;
    if (recorder) {
      recorder.kill("SIGINT");
      if (recorder.exitCode === null) await once(recorder, "exit");
    }
    let folded: Folded;
    if (perf) {
      const script = spawnSync("perf", ["script", "-i", perfData], { encoding: "utf8", maxBuffer: 1 << 30 });
      if (script.status !== 0) throw new Error(`perf script failed: ${script.stderr}`);
      folded = foldPerfScript(script.stdout);
    } else {
      await stopServer(server);
      const file = readdirSync(cpuProfDir).find((n) => n.endsWith(".cpuprofile"));
      if (!file) throw new Error(`${s.label}: node --cpu-prof wrote no profile in ${cpuProfDir}`);
      folded = foldCpuProfile(
        JSON.parse(readFileSync(join(cpuProfDir, file), "utf8")) as Parameters<typeof foldCpuProfile>[0],
      );
    }
    return { folded, cpu, requests: r.requests, seconds: r.seconds, bad: r.bad };
  } finally {
    await stopServer(server);
    rmSync(perfData, { force: true });
    rmSync(`/tmp/perf-${pid}.map`, { force: true });
  }
}

/** Draws `folded` as a flame graph SVG with flamegraph.pl; `countName` names what the widths count. */
export function flameGraph(folded: Folded, title: string, svg: string, countName = "samples"): void {
  const input = join(OUT, "flamegraph-input.folded");
  writeFileSync(input, foldedText(folded));
  const r = spawnSync(
    "perl",
    [FLAMEGRAPH, "--title", title, "--countname", countName, "--hash", "--minwidth", "1.5", "--width", "1400", input],
    { encoding: "utf8", maxBuffer: 1 << 28 },
  );
  rmSync(input, { force: true });
  if (r.status !== 0) throw new Error(`flamegraph.pl failed: ${r.stderr}`);
  writeFileSync(svg, r.stdout);
}

function baseRef(argv: string[]): string | undefined {
  const i = argv.indexOf("--base");
  if (i >= 0) {
    const ref = argv[i + 1];
    if (!ref) throw new Error("--base needs a git revision (for example --base 47f4c60)");
    return ref;
  }
  return process.env.PROFILE_BASE || undefined;
}

export async function main(argv = process.argv.slice(2)): Promise<void> {
  const mainJs = join(ROOT, "dist", "cli", "main.js");
  if (!existsSync(mainJs)) throw new Error(`${mainJs} is missing: run make build first`);
  if (!haveWrk()) throw new Error("wrk is not installed (Debian package wrk: apt-get install -y wrk)");
  if (!existsSync(FLAMEGRAPH))
    throw new Error(`${FLAMEGRAPH} is missing: apt-get install -y libdevel-nytprof-perl (or set FLAMEGRAPH)`);
  mkdirSync(OUT, { recursive: true });
  mkdirSync(DOCS, { recursive: true });
  const ref = baseRef(argv);
  const perf = perfWorks();
  console.log(
    perf.ok
      ? "perf: recording cpu-clock samples with call graphs (kernel, native and JS frames; node --perf-basic-prof)"
      : `perf cannot record here (${perf.why}): JS side only, from node --cpu-prof (start-up and warm-up included)`,
  );
  const f = await createFixture();
  const subjects: Subject[] = [{ key: "portier", label: "Portier", root: ROOT }];
  try {
    if (ref) {
      const short = spawnSync("git", ["-C", ROOT, "rev-parse", "--short", ref], { encoding: "utf8" }).stdout.trim();
      if (!short) throw new Error(`--base ${ref}: not a revision of this repository`);
      console.log(`compiling ${short}'s src/ (git archive + tsc)`);
      subjects.push({ key: `portier-${short}`, label: `Portier ${short}`, root: compiledBase(ref) });
    }
    subjects.push({ key: "same-shaped", label: "same-shaped server" });

    // The same-shaped server answers Portier's own answers.
    const probe = await startNode("Portier", [], mainJs, serveArgs(f), { readyPath: "/ready" });
    const shape = await shapeOf(probe.url, f).finally(() => stopServer(probe));

    const loads: [string, Load][] = [
      ["forward-auth", forwardAuthLoad(f)],
      ["decide", decideLoad(f)],
    ];
    // Interleaved rounds, the order rotating per round, each a fresh server: samples and CPU add up per cell.
    const cells = loads.flatMap(([loadName, load]) =>
      subjects.map((subject) => ({
        subject,
        loadName,
        load,
        folded: new Map() as Folded,
        cpu: 0,
        requests: 0,
        seconds: 0,
        bad: 0,
      })),
    );
    const load0 = loadavg()[0]!;
    let idStart = 1_000_000;
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < cells.length; i++) {
        const c = cells[(i + round) % cells.length]!;
        const p = await profileOne(c.subject, c.loadName, c.load, f, shape, perf.ok, idStart);
        idStart += 100_000_000;
        mergeFolded(c.folded, p.folded);
        c.cpu += p.cpu;
        c.requests += p.requests;
        c.seconds += p.seconds;
        c.bad += p.bad;
      }
      console.log(`round ${round + 1} of ${ROUNDS} done (load average ${loadavg()[0]!.toFixed(1)})`);
    }
    const results: Profiled[] = [];
    for (const c of cells) {
      const cpuUs = (c.cpu / c.requests) * 1e6;
      const rps = c.requests / c.seconds;
      const rows = costTable(c.folded, cpuUs);
      const samples = rows.reduce((n, r) => n + r.samples, 0);
      results.push({ subject: c.subject, loadName: c.loadName, rows, cpuUs, rps, samples, bad: c.bad });
      const base = `${c.subject.key}-${c.loadName}`;
      writeFileSync(join(OUT, `${base}.folded`), foldedText(c.folded));
      const svg = join(OUT, `${base}.svg`);
      const what = c.loadName === "decide" ? "POST /decide" : "GET /forward-auth/nginx";
      flameGraph(
        c.folded,
        `${c.subject.label}, ${what} under wrk (${CONNECTIONS} connections, ids never ` +
          `repeating): ${perf.ok ? "perf cpu-clock" : "node --cpu-prof"}`,
        svg,
      );
      if (c.loadName === "forward-auth") copyFileSync(svg, join(DOCS, `${base}.svg`));
      console.log(
        `${c.subject.label}, ${what}: ${Math.round(rps).toLocaleString("en")} req/s, ${cpuUs.toFixed(0)} us CPU ` +
          `per request, ${samples} samples${c.bad ? `, ${c.bad} errors or non-2xx!` : ""} -> ${svg}`,
      );
    }
    const load1 = loadavg()[0]!;
    printTable(results);
    console.log(
      `\nLoad average: ${load0.toFixed(1)} at the start, ${load1.toFixed(1)} at the end, ` +
        `on ${availableParallelism()} cores. Flame graphs of /forward-auth/nginx: docs/profile/; all folded stacks ` +
        `and graphs: build/profile/.`,
    );
  } finally {
    rmSync(f.dir, { recursive: true, force: true });
    for (const s of subjects) if (s.root && s.root !== ROOT) rmSync(s.root, { recursive: true, force: true });
  }
}

function printTable(results: Profiled[]): void {
  const head = results.map((r) => `${r.subject.label}, ${r.loadName === "decide" ? "/decide" : "/forward-auth"}`);
  console.log("");
  console.log(`| CPU per request | ${head.join(" | ")} |`);
  console.log(`|---|${head.map(() => "---").join("|")}|`);
  for (const c of CATEGORIES) {
    const cells = results.map((r) => {
      const row = r.rows.find((x) => x.category === c)!;
      return row.samples === 0 ? "" : `${row.us.toFixed(0)} us (${(row.share * 100).toFixed(0)}%)`;
    });
    console.log(`| ${c} | ${cells.join(" | ")} |`);
  }
  console.log(
    `| **total** (user + system, /proc) | ${results.map((r) => `**${r.cpuUs.toFixed(0)} us**`).join(" | ")} |`,
  );
  console.log(`| req/s while profiled | ${results.map((r) => Math.round(r.rps).toLocaleString("en")).join(" | ")} |`);
  console.log(`| samples | ${results.map((r) => r.samples.toLocaleString("en")).join(" | ")} |`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
