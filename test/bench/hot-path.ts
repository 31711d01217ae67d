/**
 * The decision hot path in process, each lean change against the way it was done before, in the same run
 * (interleaved rounds, medians of operations per CPU second of this process, ratios new / before):
 *   - the answer's headers: an object with a spread vs a flat array, through ServerResponse.writeHead;
 *   - all together: the request listener (forward-auth/nginx and POST /decide) of the base commit's source
 *     (git archive of BENCH_BASE, default the merge base with main) vs this tree's, with the real verifier
 *     (token cached), the project's bundle, the service's logger and metrics.
 * Then, unless BENCH_HTTP=0, the same two services over HTTP with wrk (if installed), each compiled (tsc) and run
 * as `node dist/cli/main.js serve` like the service benchmark: POST /decide and GET /forward-auth/nginx with
 * path ids never repeating (test/bench/wrk.ts), interleaved rounds in rotating order, median req/s and the
 * server's CPU microseconds per request (its process tree, from /proc), and the load average around the rounds.
 * Run: make build && npx tsx test/bench/hot-path.ts (BENCH_HTTP_ONLY=1: the HTTP rows only).
 * BENCH_BASE_DIR=<dir>: the base is that tree, built already (its own node_modules and dist/), for a base whose
 * dependencies differ from this tree's (git worktree add <dir> <ref>, then npm ci and npx tsc -p tsconfig.json in
 * it). BENCH_HTTP_PROCESSES=N: N server processes per side over HTTP, their samples pooled (two processes of one
 * code differ by up to 7%).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, openSync, rmSync } from "node:fs";
import { IncomingMessage, ServerResponse } from "node:http";
import { Socket } from "node:net";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { fileURLToPath, pathToFileURL } from "node:url";
import { pino, type Logger } from "pino";
import { createAccessTokenVerifier } from "../../src/auth/index.js";
import { loadEngine, tokenFacts } from "../../src/engine/index.js";
import { BoundedLogDestination } from "../../src/service/bounded-log-destination.js";
import { BENCH_TENANT } from "./directory-probe.js";
import {
  baseTree,
  createFixture,
  ISSUER,
  serveArgs,
  sideSettings,
  startNode,
  stopServer,
  type Server,
} from "./fixture.js";
import { fmt } from "./measure.js";
import { runWrk, treeCpuSeconds, type Load } from "./wrk.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const PATH = "/v2/ORG001/elevesJeunes/42/absences";
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const MS = Number(process.env.BENCH_MS ?? 300);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

/** This process's CPU time (user + system) in ms: on a shared, loaded machine a steadier clock than the wall. */
function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * Operations per CPU second of a function that answers now or with a promise (awaited only then, as the
 * adapters do), run for `ms` of wall time.
 */
async function rateMaybe(fn: () => unknown, ms: number): Promise<number> {
  let n = 0;
  const wallEnd = performance.now() + ms;
  const cpu0 = cpuMs();
  while (performance.now() < wallEnd) {
    for (let i = 0; i < 32; i++) {
      const r = fn();
      if (r instanceof Promise) await r;
    }
    n += 32;
  }
  return (n * 1000) / Math.max(cpuMs() - cpu0, 1e-3);
}

/** Interleaved rounds of each function (sync or async); the median rate (per CPU second) of each. */
async function compareMaybe(fns: Record<string, () => unknown>): Promise<Map<string, number>> {
  const samples = new Map<string, number[]>(Object.keys(fns).map((k) => [k, []]));
  for (const fn of Object.values(fns)) await rateMaybe(fn, 100);
  for (let r = 0; r < ROUNDS; r++)
    for (const [name, fn] of Object.entries(fns)) samples.get(name)!.push(await rateMaybe(fn, MS));
  return new Map([...samples].map(([k, xs]) => [k, median(xs)]));
}

function report(title: string, before: number, after: number): void {
  console.log(
    `  ${title.padEnd(58)} before ${fmt(before).padStart(9)}  ` +
      `after ${fmt(after).padStart(9)}  ${(after / before).toFixed(2)}x`,
  );
}

/** A ServerResponse writing into nothing (a fresh one per answer, as per request). */
function nullResponse(): ServerResponse {
  const req = new IncomingMessage(new Socket());
  req.method = "GET";
  req.httpVersionMajor = 1;
  req.httpVersionMinor = 1;
  const sink = new Writable({ write: (_c, _e, cb) => cb() }) as Writable & { cork(): void; uncork(): void };
  const res = new ServerResponse(req);
  res.assignSocket(sink as unknown as Socket);
  return res;
}

function fakeRequest(url: string, method: string, headers: [string, string][], body?: string): IncomingMessage {
  const req = new IncomingMessage(new Socket());
  req.url = url;
  req.method = method;
  req.rawHeaders = headers.flat();
  for (const [k, v] of headers) req.headers[k.toLowerCase()] = v;
  if (body !== undefined) {
    req.push(body);
    req.push(null);
  }
  return req;
}

// Functions as properties: the bench takes them out of the module object (no `this`).
interface ListenerModule {
  decisionListener: (
    decide: unknown,
    limits: unknown,
    next: unknown,
    logger?: Logger,
  ) => (req: IncomingMessage, res: ServerResponse) => void;
}
interface DecideModule {
  createDecide: (ctx: Record<string, unknown>) => unknown;
}
interface MetricsModule {
  createMetrics: (sources: Record<string, unknown>) => unknown;
}

export async function main(): Promise<void> {
  // The base tree (its src and compiled dist) and the fixture folder are removed at the end, also on failure.
  const made: string[] = [];
  try {
    await hotPath(made);
  } finally {
    for (const d of made) rmSync(d, { recursive: true, force: true });
  }
}

async function hotPath(made: string[]): Promise<void> {
  const ref =
    process.env.BENCH_BASE ??
    execFileSync("git", ["-C", ROOT, "merge-base", "HEAD", "main"], { encoding: "utf8" }).trim();
  // Keys, tokens and the directory of their users (fixture.ts): the first user is the caller.
  const f = await createFixture();
  made.push(f.dir);
  const { jwksFile, directoryFile } = f;
  const [token, claims] = [f.tokens[0]!, f.claims[0]!];
  const callerSub = claims.sub as string;
  const bundle = join(ROOT, "build", "bundle.tar.gz");

  const devNull = openSync("/dev/null", "w");
  const destination = new BoundedLogDestination({ fd: devNull, maxBufferBytes: 16 * 1024 * 1024 });
  const logger = pino(
    {
      level: "info",
      base: { pid: process.pid },
      redact: { paths: ["token", "authorization", "headers.authorization", "req.headers.authorization"], remove: true },
    },
    destination,
  );
  const engine = await loadEngine(bundle);
  const verifier = createAccessTokenVerifier({ issuer: ISSUER, jwksFile, refreshIntervalMs: 0 });
  await verifier.ready();
  await verifier.verify(token);
  const input = {
    method: "GET",
    path: PATH,
    token: tokenFacts(claims),
    roles: ["enseignant_jeune"],
    synced: true,
    role_check: "enforce" as const,
  };
  const decision = engine.decide(input);
  if (!decision.allow) throw new Error("the benchmark request is not allowed");

  const baseName = process.env.BENCH_BASE_DIR ?? ref.slice(0, 12);
  console.log(`Hot path in process (${ROUNDS} interleaved rounds of ${MS} ms, medians; base ${baseName}):`);

  const decisionId = "6f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f";
  const prebuilt = process.env.BENCH_BASE_DIR;
  const base = prebuilt ?? baseTree(ref);
  if (prebuilt === undefined) made.push(base);
  if (process.env.BENCH_HTTP_ONLY === "1") {
    await overHttp(base, { jwksFile, directoryFile, token });
    verifier.close();
    return;
  }

  // 4. The answer's headers.
  const headerValues = {
    id: decisionId,
    sub: callerSub,
    tenant: BENCH_TENANT,
    roles: "enseignant_jeune",
    client: "web",
    flow: "accessCode",
    reason: "allowed",
  };
  const body = JSON.stringify({ allow: true, decision_id: decisionId });
  const headers = await compareMaybe({
    object: () => {
      const h: Record<string, string> = { "x-portier-decision-id": headerValues.id, "cache-control": "no-store" };
      h["x-portier-subject"] = headerValues.sub;
      h["x-portier-tenant"] = headerValues.tenant;
      h["x-portier-roles"] = headerValues.roles;
      h["x-portier-client-id"] = headerValues.client;
      h["x-portier-flow"] = headerValues.flow;
      h["x-portier-reason"] = headerValues.reason;
      const res = nullResponse();
      res.writeHead(200, {
        ...h,
        "content-type": "application/json; charset=utf-8",
        "content-length": Buffer.byteLength(body),
      });
      res.end(body);
    },
    flat: () => {
      const h = ["x-portier-decision-id", headerValues.id, "cache-control", "no-store"];
      h.push(
        "x-portier-subject",
        headerValues.sub,
        "x-portier-tenant",
        headerValues.tenant,
        "x-portier-roles",
        headerValues.roles,
        "x-portier-client-id",
        headerValues.client,
        "x-portier-flow",
        headerValues.flow,
        "x-portier-reason",
        headerValues.reason,
      );
      h.push("content-type", "application/json; charset=utf-8", "content-length", String(Buffer.byteLength(body)));
      const res = nullResponse();
      res.writeHead(200, h);
      res.end(body);
    },
  });
  report("answer headers (object spread -> flat array), incl. writeHead", headers.get("object")!, headers.get("flat")!);

  // 5. All together: the base commit's request listener vs this tree's.
  const listeners: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {};
  for (const [name, src] of [
    ["before", join(base, "src")],
    ["after", join(ROOT, "src")],
  ] as const) {
    // A module by its first path that exists in this tree (the base commit may predate a move).
    const imp = <T>(...rels: string[]) => {
      const rel = rels.find((r) => existsSync(join(src, r))) ?? rels[0]!;
      return import(pathToFileURL(join(src, rel)).href) as Promise<T>;
    };
    const { decisionListener } = await imp<ListenerModule>("service/http/listener.ts", "service/fast-adapters.ts");
    const { createDecide } = await imp<DecideModule>("service/decide/decide.ts", "service/decide.ts");
    const { createMetrics } = await imp<MetricsModule>("service/metrics.ts");
    const { loadEngine: load } = await imp<{ loadEngine: (file: string) => Promise<unknown> }>("engine/index.ts");
    const eng = await load(bundle);
    const m = createMetrics({
      keys: () => verifier.status(),
      policy: () => ({ loaded: true, reloadFailures: 0 }),
      directory: () => undefined,
    });
    const roles = ["enseignant_jeune"];
    const decide = createDecide({
      verifier,
      policy: { engine: eng, resolveRole: () => undefined },
      directory: { lookup: (sub: string) => (sub === callerSub ? { tenant_id: BENCH_TENANT, roles } : undefined) },
      rolesClaim: undefined,
      roleCheck: "enforce",
      logger,
      metrics: m,
    });
    listeners[name] = decisionListener(decide, { maxBytes: 65536, timeoutMs: 10_000 }, () => undefined, logger);
  }
  const forwardAuth: [string, string][] = [
    ["Host", "127.0.0.1"],
    ["X-Original-Method", "GET"],
    ["X-Original-URI", PATH],
    ["Authorization", `Bearer ${token}`],
    ["X-Real-IP", "127.0.0.1"],
    ["X-Request-Id", "0123456789abcdef0123456789abcdef"],
  ];
  /** One request through a listener; resolves when the answer is written. */
  const through = (listener: (req: IncomingMessage, res: ServerResponse) => void, req: IncomingMessage): unknown => {
    const res = nullResponse();
    let done: () => void = () => undefined;
    const finished = new Promise<void>((resolve) => (done = resolve));
    const end = res.end.bind(res);
    let ended = false;
    res.end = ((...args: Parameters<typeof end>) => {
      ended = true;
      done();
      return end(...args);
    }) as typeof res.end;
    listener(req, res);
    return ended ? undefined : finished;
  };
  const fa = await compareMaybe({
    before: () => through(listeners.before!, fakeRequest("/forward-auth/nginx", "GET", forwardAuth)),
    after: () => through(listeners.after!, fakeRequest("/forward-auth/nginx", "GET", forwardAuth)),
  });
  report("listener GET /forward-auth/nginx (all changes)", fa.get("before")!, fa.get("after")!);
  const decideBody = JSON.stringify({ method: "GET", path: PATH, token });
  const decideHeaders: [string, string][] = [
    ["Host", "127.0.0.1"],
    ["Content-Type", "application/json"],
    ["Content-Length", String(Buffer.byteLength(decideBody))],
  ];
  const dc = await compareMaybe({
    before: () => through(listeners.before!, fakeRequest("/decide", "POST", decideHeaders, decideBody)),
    after: () => through(listeners.after!, fakeRequest("/decide", "POST", decideHeaders, decideBody)),
  });
  report("listener POST /decide (all changes)", dc.get("before")!, dc.get("after")!);
  await destination.end(1000);

  if (process.env.BENCH_HTTP !== "0") await overHttp(base, { jwksFile, directoryFile, token });
  verifier.close();
}

async function overHttp(base: string, f: { jwksFile: string; directoryFile: string; token: string }): Promise<void> {
  if (spawnSync("wrk", ["--version"]).error) {
    console.log("wrk not installed: HTTP comparison skipped");
    return;
  }
  // The base commit compiled like this tree's dist/ (make build), each run as `node dist/cli/main.js serve`.
  if (process.env.BENCH_BASE_DIR === undefined)
    execFileSync(
      process.execPath,
      [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", join(base, "tsconfig.json")],
      { stdio: "inherit" },
    );
  const processes = Number(process.env.BENCH_HTTP_PROCESSES ?? 1);
  const seconds = Number(process.env.BENCH_SECONDS ?? 3);
  const rounds = Number(process.env.BENCH_HTTP_ROUNDS ?? 5);
  const servers: Server[] = [];
  const scriptDir = mkdtempSync(join(tmpdir(), "portier-wrk-"));
  const scriptFile = join(scriptDir, "load.lua");
  try {
    for (let p = 0; p < processes; p++)
      for (const [name, root] of [
        ["before", base],
        ["after", ROOT],
      ] as const) {
        const side = sideSettings(name);
        const args = serveArgs(f, side.args, { bundle: side.bundle });
        const mainJs = join(root, "dist", "cli", "main.js");
        const s = await startNode(name, side.nodeFlags, mainJs, args, {
          readyPath: "/ready",
          env: side.env,
          cwd: root,
        });
        servers.push(s);
      }
    const template = PATH.replace("42", "{id}");
    const loads: [string, Load][] = [
      [
        "POST /decide, ids never repeating",
        {
          method: "POST",
          target: "/decide",
          pathTemplate: template,
          unique: true,
          variants: [
            {
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ method: "GET", path: "__PATH__", token: f.token }),
            },
          ],
        },
      ],
      [
        "GET /forward-auth/nginx, ids never repeating",
        {
          method: "GET",
          target: "/forward-auth/nginx",
          pathTemplate: template,
          unique: true,
          variants: [
            {
              headers: { "x-original-method": "GET", "x-original-uri": "__PATH__", authorization: `Bearer ${f.token}` },
            },
          ],
        },
      ],
    ];
    const runs = loads.flatMap(([label, load]) => servers.map((s) => ({ label, load, s })));
    let start = 1_000_000;
    const measure = async (run: (typeof runs)[number], secs: number) => {
      const pid = run.s.child.pid!;
      const c0 = treeCpuSeconds(pid);
      const r = await runWrk(run.s.url, run.load, { connections: 10, seconds: secs, start, scriptFile });
      start += 10_000_000;
      if (r.bad > 0) throw new Error(`${run.s.name} ${run.label}: ${r.bad} errors or non-2xx answers`);
      return { rps: r.rps, cpuUs: ((treeCpuSeconds(pid) - c0) * 1e6) / Math.max(r.requests, 1) };
    };
    for (const run of runs) await measure(run, 2); // warm-up: JIT, token cache
    const samples = new Map<string, { rps: number[]; cpuUs: number[] }>(
      runs.map((r) => [`${r.label}|${r.s.name}`, { rps: [], cpuUs: [] }]),
    );
    const load0 = loadavg()[0]!;
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < runs.length; i++) {
        const run = runs[(i + round) % runs.length]!;
        const m = await measure(run, seconds);
        const x = samples.get(`${run.label}|${run.s.name}`)!;
        x.rps.push(m.rps);
        x.cpuUs.push(m.cpuUs);
      }
    }
    console.log(
      `Over HTTP with wrk (10 connections, 1 thread, ${rounds} interleaved rounds of ${seconds} s, medians; node ` +
        `dist/cli/main.js serve, one worker each, ${processes} process(es) per side pooled):`,
    );
    for (const [label] of loads) {
      const b = samples.get(`${label}|before`)!;
      const a = samples.get(`${label}|after`)!;
      const [br, ar, bc, ac] = [median(b.rps), median(a.rps), median(b.cpuUs), median(a.cpuUs)];
      console.log(
        `  ${label.padEnd(46)} before ${fmt(br).padStart(9)} (${bc.toFixed(0)} us CPU/req)  ` +
          `after ${fmt(ar).padStart(9)} (${ac.toFixed(0)} us CPU/req) ` +
          ` ${(ar / br).toFixed(3)}x req/s, ${(ac / bc).toFixed(3)}x CPU per request`,
      );
    }
    console.log(
      `  load average ${load0.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end, ` +
        `on ${availableParallelism()} cores`,
    );
  } finally {
    await Promise.all(servers.map(stopServer));
    rmSync(scriptDir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
