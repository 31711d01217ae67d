/**
 * Decision-service benchmark, one run, measured from outside with `wrk` (one thread, BENCH_CONNECTIONS=10
 * keep-alive connections), interleaved rounds (BENCH_ROUNDS=5 of BENCH_SECONDS=2 each, the order rotating per
 * round), medians per target. Every server is its own process on 127.0.0.1, started once:
 *   - a bare node:http server answering a fixed JSON to GET (the baseline, 1.00),
 *   - the same-shaped server (same-shaped-server.mjs): reads the request, answers Portier's JSON, no decision,
 *   - `opa run --server` (the pinned opa) on a Rego bundle of the same policies and data, POST
 *     /v1/data/portier/decision with the same decision input (claims already verified),
 *   - Portier (`node dist/cli/main.js serve`, decision log on, to /dev/null): POST /decide and GET
 *     /forward-auth/nginx, path ids never repeating and repeated inputs; `--workers 2` vs 1; a directory of
 *     BENCH_SERVICE_RECORDS=1M records vs one of the 100 users the tokens belong to; and gRPC Check on its
 *     --grpc-port, the same inputs as /forward-auth/nginx, driven instead of wrk by ghz (Go, pinned in
 *     tools/ensure-ghz.sh; `make bench` builds it), BENCH_CONNECTIONS calls in flight on one HTTP/2 connection
 *     (as one Envoy worker holds one), or where ghz is absent by grpc-load.mjs (a grpc-js client process,
 *     heavier: it takes CPU from the server on 2 cores, so its figures are lower bounds).
 * 100 users' tokens are sent in turn (each is verified once, then cached). Reported per target: req/s, ratio
 * to the bare GET and to the same-shaped server, p50/p99 from wrk's latency distribution, and the server's CPU
 * microseconds per request (user + system time of its process tree, from /proc). Ends with a markdown table of
 * the issue's targets beside the measured values, which README.md takes verbatim.
 * Run: make build && npx tsx test/bench/service.ts (Portier runs from dist/, so build first).
 * BENCH_TARGETS="name;name" runs only the targets of those exact names (and prints their rows and the gRPC targets).
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { once } from "node:events";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { tokenFacts } from "../../src/engine/index.js";
import { writeDirectory } from "./directory.js";
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
  startServer,
  stopServer,
  type Server,
  USERS,
  type Fixture,
} from "./fixture.js";
import { median } from "./measure.js";
import { haveWrk, runWrk, treeCpuSeconds, type Load, type WrkResult } from "./wrk.js";
import { freePort } from "../support/free-port.js";
import { pinned, placement } from "./pin.js";

const PORTIER_MAIN = join(ROOT, "dist", "cli", "main.js");
const GRPC_LOAD = fileURLToPath(new URL("./grpc-load.mjs", import.meta.url));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const RECORDS = Number(process.env.BENCH_SERVICE_RECORDS ?? 1_000_000);

/**
 * The directory users the tokens belong to: every one an `enseignant_jeune` (index % 3 === 0), spread over the file.
 */
const userIndex = (k: number) => 3 * Math.floor((k * Math.floor(RECORDS / 3)) / USERS);

interface Target {
  name: string;
  server: string;
  load: Load;
  /** Driven over gRPC Check (grpc-load.mjs) at the server's gRPC address instead of wrk. */
  grpc?: boolean;
}

const GHZ = join(ROOT, ".tools", "bin", "ghz");

/**
 * ghz for `seconds` against `address`: the CheckRequests Envoy sends, tokens in turn, path ids never repeating (ghz's
 * request number).
 */
async function runGhz(
  address: string,
  load: Load,
  tokens: string[],
  opts: { connections: number; seconds: number; start: number; specFile: string },
): Promise<WrkResult> {
  const path = load.pathTemplate.replace("{id}", load.unique ? `${opts.start}-{{.RequestNumber}}` : "42");
  writeFileSync(opts.specFile, JSON.stringify(checkRequests(tokens, path)));
  const args = ghzCheckArgs(address, opts.specFile, [
    "-c",
    String(opts.connections),
    "--connections",
    "1",
    "-z",
    `${opts.seconds}s`,
  ]);
  const [bin, argv] = pinned("client", GHZ, args);
  const child = spawn(bin, argv, { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  const [code] = (await once(child, "exit")) as [number | null];
  if (code !== 0) throw new Error(`ghz exited with ${code}`);
  const r = JSON.parse(out) as {
    count: number;
    total: number;
    rps: number;
    latencyDistribution: { percentage: number; latency: number }[] | null;
    statusCodeDistribution: Record<string, number>;
    errorDistribution: Record<string, number> | null;
  };
  const at = (q: number) => (r.latencyDistribution?.find((x) => x.percentage === q)?.latency ?? 0) / 1e6;
  // The calls still in flight when the duration ends fail as ghz closes its own connection ("transport is
  // closing", or Canceled): not the server's errors. Anything else counts.
  const ended = Object.entries(r.errorDistribution ?? {}).reduce(
    (n, [what, count]) => n + (/transport is closing|Canceled/i.test(what) ? count : 0),
    0,
  );
  return {
    requests: r.count,
    seconds: r.total / 1e9,
    rps: r.rps,
    p50Ms: at(50),
    p99Ms: at(99),
    bad: r.count - (r.statusCodeDistribution.OK ?? 0) - ended,
  };
}

/** grpc-load.mjs for `seconds` against `address`: the same tokens and paths as the HTTP load. */
async function runGrpcLoad(
  address: string,
  load: Load,
  tokens: string[],
  opts: { connections: number; seconds: number; start: number; specFile: string },
): Promise<WrkResult> {
  writeFileSync(
    opts.specFile,
    JSON.stringify({ tokens, pathTemplate: load.pathTemplate, unique: load.unique, start: opts.start }),
  );
  const child = spawn(
    process.execPath,
    [GRPC_LOAD, address, String(opts.seconds), String(opts.connections), opts.specFile],
    { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] },
  );
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  const [code] = (await once(child, "exit")) as [number | null];
  if (code !== 0) throw new Error(`grpc-load.mjs exited with ${code}`);
  return JSON.parse(out.trim()) as WrkResult;
}

interface Summary {
  name: string;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  cpuUs: number;
  bad: number;
}

export async function main(): Promise<void> {
  if (!haveWrk())
    throw new Error("wrk is not installed (Debian package wrk: apt-get install -y wrk; `make bench` installs it)");
  if (!existsSync(PORTIER_MAIN)) throw new Error(`${PORTIER_MAIN} is missing: run make build first`);
  const dir = mkdtempSync(join(tmpdir(), "portier-bench-"));
  const servers = new Map<string, Server>();
  let f: Fixture | undefined;
  try {
    // Keys, one token per user and the directory of those users (fixture.ts); the large directory holds them too.
    f = await createFixture(userIndex);
    const big = join(dir, "big.ndjson");
    await writeDirectory(big, RECORDS, "ndjson");

    const start = async (
      name: string,
      cmd: string,
      args: string[],
      readyPath: string,
      env: Record<string, string> = {},
    ) => servers.set(name, await startServer(name, cmd, args, { readyPath, env }));
    const fixed = JSON.stringify({
      decision_id: "00000000-0000-4000-8000-000000000000",
      allow: true,
      status: 200,
      reason: "allowed",
      flow: "accessCode",
    });
    const bareJs =
      `require("node:http").createServer((q,s)=>{q.resume();q.on("end",()=>{` +
      `s.writeHead(200,{"content-type":"application/json"});s.end(${JSON.stringify(fixed)})})})` +
      `.listen(+process.argv[1],"127.0.0.1")`;
    const serve = (directory: string, workers: number, extra: string[] = []) => [
      PORTIER_MAIN,
      ...serveArgs(f!, extra, { directory, workers }),
    ];
    const grpcAddress = `127.0.0.1:${await freePort()}`;
    const opa = spawnSync("bash", [join(ROOT, "tools", "ensure-opa.sh")], { encoding: "utf8" }).stdout.trim();
    const opaBundle = join(dir, "rego-bundle.tar.gz");
    // The pinned opa is built without cgo, so without OPA's wasm runtime: a Rego bundle of the same sources and data.
    const built = spawnSync(
      opa,
      ["build", "--ignore", "*_test.rego", "-o", opaBundle, join(ROOT, "policies"), join(ROOT, "build", "bundle-data")],
      { encoding: "utf8" },
    );
    if (built.status !== 0) throw new Error(`opa build failed: ${built.stderr}`);
    await Promise.all([
      start("bare", process.execPath, ["-e", bareJs, "{port}"], "/"),
      start(
        "opa",
        opa,
        ["run", "--server", "--addr", "127.0.0.1:{port}", "--log-level", "error", "--bundle", opaBundle],
        "/health",
      ),
      start(
        "portier",
        process.execPath,
        serve(f.directoryFile, 1, ["--grpc-port", grpcAddress.split(":")[1]!]),
        "/ready",
      ),
      start("portier-2w", process.execPath, serve(f.directoryFile, 2), "/ready"),
      start("portier-1M", process.execPath, serve(big, 1), "/ready"),
    ]);

    // Portier's own answers to the benchmark requests: checked, and the shape the same-shaped server answers.
    const path = PATH_TEMPLATE.replace("{id}", "42");
    await start("shaped", process.execPath, [SHAPED, "{port}"], "/", {
      BENCH_SHAPE: await shapeOf(servers.get("portier")!.url, f),
    });
    const opaInput = (claims: Record<string, unknown>) => ({
      method: "GET",
      path: "__PATH__",
      token: tokenFacts(claims),
      roles: ["enseignant_jeune"],
      synced: true,
      role_check: "enforce",
    });
    const opaCheck = (await (
      await fetch(`${servers.get("opa")!.url}/v1/data/portier/decision`, {
        method: "POST",
        body: JSON.stringify({ input: { ...opaInput(f.claims[0]!), path } }),
      })
    ).json()) as { result?: { allow?: boolean } };
    if (opaCheck.result?.allow !== true)
      throw new Error(`OPA did not allow the benchmark request: ${JSON.stringify(opaCheck)}`);

    const fixture = f;
    const decide = (unique: boolean) => decideLoad(fixture, unique);
    const forwardAuth = (unique: boolean) => forwardAuthLoad(fixture, unique);
    const opaLoad: Load = {
      method: "POST",
      target: "/v1/data/portier/decision",
      pathTemplate: PATH_TEMPLATE,
      unique: true,
      variants: f.claims.map((c) => ({
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ input: opaInput(c) }),
      })),
    };
    const M = RECORDS >= 1e6 && RECORDS % 1e5 === 0 ? `${RECORDS / 1e6}M` : RECORDS.toLocaleString("en");
    const allTargets: Target[] = [
      {
        name: "bare node:http GET",
        server: "bare",
        load: { method: "GET", target: "/", pathTemplate: "/", unique: false, variants: [{ headers: {} }] },
      },
      { name: "same-shaped server, POST /decide shape", server: "shaped", load: decide(true) },
      { name: "same-shaped server, forward-auth shape", server: "shaped", load: forwardAuth(true) },
      { name: "opa run --server, POST /v1/data, ids never repeating", server: "opa", load: opaLoad },
      { name: "Portier POST /decide, ids never repeating", server: "portier", load: decide(true) },
      { name: "Portier POST /decide, repeated inputs", server: "portier", load: decide(false) },
      { name: "Portier /forward-auth/nginx, ids never repeating", server: "portier", load: forwardAuth(true) },
      { name: "Portier /forward-auth/nginx, repeated inputs", server: "portier", load: forwardAuth(false) },
      { name: "Portier gRPC Check, ids never repeating", server: "portier", load: forwardAuth(true), grpc: true },
      {
        name: "Portier /forward-auth/nginx, ids never repeating, --workers 2",
        server: "portier-2w",
        load: forwardAuth(true),
      },
      {
        name: `Portier /forward-auth/nginx, ids never repeating, ${M}-record directory`,
        server: "portier-1M",
        load: forwardAuth(true),
      },
    ];

    const only = process.env.BENCH_TARGETS?.split(";").filter(Boolean);
    const targets = only ? allTargets.filter((t) => only.includes(t.name)) : allTargets;
    const tokens = f.tokens;
    const scriptFile = join(dir, "load.lua");
    let idStart = 1_000_000;
    const measure = async (t: Target, seconds: number): Promise<WrkResult & { cpu: number }> => {
      const pid = servers.get(t.server)!.child.pid!;
      const cpu0 = treeCpuSeconds(pid);
      const r = t.grpc
        ? await (existsSync(GHZ) ? runGhz : runGrpcLoad)(grpcAddress, t.load, tokens, {
            connections: CONNECTIONS,
            seconds,
            start: idStart,
            specFile: join(dir, "grpc-load.json"),
          })
        : await runWrk(servers.get(t.server)!.url, t.load, {
            connections: CONNECTIONS,
            seconds,
            start: idStart,
            scriptFile,
          });
      idStart += 10_000_000;
      return { ...r, cpu: treeCpuSeconds(pid) - cpu0 };
    };
    console.log(
      `wrk, one thread, ${CONNECTIONS} keep-alive connections (gRPC: ${
        existsSync(GHZ) ? "ghz" : "grpc-load.mjs, ghz not built"
      }, ${CONNECTIONS} calls in flight on one connection); ${ROUNDS} interleaved rounds ` +
        `of ${SECONDS} s per target (after a 2 s warm-up each); medians:`,
    );
    for (const t of targets) await measure(t, 2); // JIT, token cache, and the GC that follows a large directory load
    const samples = new Map<string, (WrkResult & { cpu: number })[]>(targets.map((t) => [t.name, []]));
    const loadBefore = loadavg()[0]!;
    for (let r = 0; r < ROUNDS; r++) {
      for (let i = 0; i < targets.length; i++) {
        const t = targets[(i + r) % targets.length]!;
        samples.get(t.name)!.push(await measure(t, SECONDS));
      }
    }
    const summary: Summary[] = targets.map((t) => {
      const xs = samples.get(t.name)!;
      return {
        name: t.name,
        rps: median(xs.map((x) => x.rps)),
        p50Ms: median(xs.map((x) => x.p50Ms)),
        p99Ms: median(xs.map((x) => x.p99Ms)),
        cpuUs: median(xs.map((x) => (x.cpu / x.requests) * 1e6)),
        bad: xs.reduce((n, x) => n + x.bad, 0),
      };
    });
    report(summary, M, only !== undefined);
    // What else ran: above about one runnable job per core, other jobs' CPU shows in every figure, CPU per request
    // included.
    console.log(
      `\nLoad average during the ` +
        `rounds: ${loadBefore.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end, ` +
        `on ${availableParallelism()} cores; ${placement()}.`,
    );
  } finally {
    await Promise.all([...servers.values()].map(stopServer));
    rmSync(dir, { recursive: true, force: true });
    if (f) rmSync(f.dir, { recursive: true, force: true });
  }
}

function report(s: Summary[], M: string, partial = false): void {
  const by = (prefix: string) => s.find((x) => x.name.startsWith(prefix))!;
  if (partial) return reportPartial(s);
  const bare = by("bare");
  const shapedDecide = by("same-shaped server, POST");
  const shapedGateway = by("same-shaped server, forward");
  const opa = by("opa");
  const shapedOf = (x: Summary) =>
    x.name.includes("/decide") ? shapedDecide : x.name.includes("forward-auth") ? shapedGateway : undefined;
  const r2 = (x: number) => `${x.toFixed(2)}x`;
  const ms = (x: number) => `${x.toFixed(2)} ms`;
  console.log("");
  console.log("| target | req/s | × bare GET | × same-shaped | p50 | p99 | server CPU per request |");
  console.log("|---|---|---|---|---|---|---|");
  for (const x of s) {
    const sh = shapedOf(x);
    const shaped = sh && sh !== x ? r2(x.rps / sh.rps) : "";
    const bad = x.bad > 0 ? ` (${x.bad} errors or non-2xx!)` : "";
    console.log(
      `| ${x.name}${bad} | ${Math.round(x.rps).toLocaleString("en")} | ${r2(x.rps / bare.rps)} | ${shaped} | ` +
        `${ms(x.p50Ms)} | ${ms(x.p99Ms)} | ${x.cpuUs.toFixed(0)} us |`,
    );
  }

  const portier = s.filter(
    (x) => x.name.startsWith("Portier") && !x.name.includes("--workers") && !x.name.includes("directory"),
  );
  const unique = portier.filter((x) => x.name.includes("never repeating"));
  const repeated = portier.filter((x) => x.name.includes("repeated"));
  const range = (xs: number[]) =>
    Math.min(...xs) === Math.max(...xs) ? r2(xs[0]!) : `${r2(Math.min(...xs))}-${r2(Math.max(...xs))}`;
  const p99s = portier.map((x) => x.p99Ms);
  const oneW = by("Portier /forward-auth/nginx, ids never repeating");
  const twoW = s.find((x) => x.name.includes("--workers 2"))!;
  const bigDir = s.find((x) => x.name.includes("directory"))!;
  // Throughput ratios twice: by req/s (what a client sees, moved by every other job on a shared machine) and by
  // requests per CPU second of the server (its capacity; the steadier figure). "met" says which reach the target.
  const perCpu = (x: Summary, base: Summary) => base.cpuUs / x.cpuUs;
  type Row = [what: string, wanted: string, byRps: string, byCpu: string, met: string];
  const judged = (rps: number[], cpu: number[], min: number) =>
    `req/s ${Math.min(...rps) >= min ? "yes" : "**no**"}, CPU ${Math.min(...cpu) >= min ? "yes" : "**no**"}`;
  const ratioRow = (what: string, xs: Summary[], base: (x: Summary) => Summary, min: number): Row => {
    const rps = xs.map((x) => x.rps / base(x).rps);
    const cpu = xs.map((x) => perCpu(x, base(x)));
    return [what, `>= ${r2(min)}`, range(rps), range(cpu), judged(rps, cpu, min)];
  };
  const rows: Row[] = [
    ratioRow(
      "/decide and /forward-auth, 1 worker, ids never repeating, × same-shaped server",
      unique,
      (x) => shapedOf(x)!,
      0.5,
    ),
    ratioRow(
      "/decide and /forward-auth, 1 worker, repeated inputs, × same-shaped server",
      repeated,
      (x) => shapedOf(x)!,
      0.8,
    ),
    [
      `p99 at ${CONNECTIONS} connections (Portier, 1 worker)`,
      "< 2 ms",
      `${Math.min(...p99s).toFixed(2)}-${Math.max(...p99s).toFixed(2)} ms (bare GET: ${ms(bare.p99Ms)})`,
      "",
      Math.max(...p99s) < 2 ? "yes" : "**no**",
    ],
    ratioRow("× `opa run --server` on the same policies (ids never repeating)", unique, () => opa, 4),
    ratioRow(
      `/forward-auth with a ${M}-record directory × a ${USERS}-record one ` +
        `(p99 ${ms(bigDir.p99Ms)} vs ${ms(oneW.p99Ms)})`,
      [bigDir],
      () => oneW,
      0.95,
    ),
    [
      "/forward-auth, `--workers 2` × 1 (2 cores shared with wrk)",
      "(measured)",
      r2(twoW.rps / oneW.rps),
      r2(perCpu(twoW, oneW)),
      "",
    ],
  ];
  console.log("");
  console.log("| issue 13 target | wanted | measured, req/s | measured, requests per CPU second | met |");
  console.log("|---|---|---|---|---|");
  for (const row of rows) console.log(`| ${row.join(" | ")} |`);
  grpcTargets(s);
}

/** BENCH_TARGETS: the rows measured, and the gRPC targets when both of their rows were. */
function reportPartial(s: Summary[]): void {
  console.log("");
  console.log("| target | req/s | p50 | p99 | server CPU per request |");
  console.log("|---|---|---|---|---|");
  for (const x of s)
    console.log(
      `| ${x.name}${
        x.bad > 0 ? ` (${x.bad} errors or non-2xx!)` : ""
      } | ${Math.round(x.rps).toLocaleString("en")} | ${x.p50Ms.toFixed(2)} ms | ${x.p99Ms.toFixed(2)} ms ` +
        `| ${x.cpuUs.toFixed(0)} us |`,
    );
  grpcTargets(s);
}

/** Issue 19: gRPC Check (a grpc-js client process) × /forward-auth/nginx under wrk, same inputs; its p99. */
function grpcTargets(s: Summary[]): void {
  const grpc = s.find((x) => x.name.startsWith("Portier gRPC Check"));
  const http = s.find((x) => x.name === "Portier /forward-auth/nginx, ids never repeating");
  if (!grpc || !http) return;
  const ok = (b: boolean) => (b ? "yes" : "**no**");
  console.log("");
  console.log("| issue 19 target | wanted | measured | met |");
  console.log("|---|---|---|---|");
  console.log(
    `| gRPC Check (${existsSync(GHZ) ? "ghz" : "grpc-load.mjs"}) × /forward-auth/nginx (wrk), req/s | >= 0.80x ` +
      `| ${(grpc.rps / http.rps).toFixed(2)}x ` +
      `(${Math.round(grpc.rps).toLocaleString("en")} vs ${Math.round(http.rps).toLocaleString("en")}) ` +
      `| ${ok(grpc.rps / http.rps >= 0.8)} |`,
  );
  console.log(
    `| gRPC Check × /forward-auth/nginx, requests per server CPU second | (measured) ` +
      `| ${(http.cpuUs / grpc.cpuUs).toFixed(2)}x (${grpc.cpuUs.toFixed(0)} vs ${http.cpuUs.toFixed(0)} us) | |`,
  );
  console.log(
    `| gRPC Check p99 at ${CONNECTIONS} calls in flight | < 3 ms ` +
      `| ${grpc.p99Ms.toFixed(2)} ms (p50 ${grpc.p50Ms.toFixed(2)} ms) | ${ok(grpc.p99Ms < 3)} |`,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
