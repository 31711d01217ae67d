/**
 * Portier against Cerbos on the same AuthZEN requests: the interop "Todo" API gateway scenario, Portier serving
 * examples/authzen-todo (roles from its directory; the decision log on, its stdout line to /dev/null) and Cerbos
 * 0.55.0 (@cerbos/cerbos-linux-x64) serving test/bench/cerbos/policies (the same rules as a Cerbos resource policy;
 * roles sent by the PEP in subject.properties["cerbos.roles"], Cerbos's AuthZEN mapping; no audit log).
 * Loads, each over HTTP with wrk, interleaved rounds in one run (test/bench/wrk.ts), one Portier worker:
 *   - evaluation: POST /access/v1/evaluation, the scenario's 25 questions in turn;
 *   - evaluations: POST /access/v1/evaluations, all 25 in one batch.
 * Printed: requests per second, the server's CPU time per decision (its process tree, from /proc) and wrk's p99,
 * medians over rounds, and Portier's ratios to Cerbos. Both sides are first asked the 25 questions once and their
 * decisions compared with the scenario's (a side that disagrees is reported, not measured as equal).
 * Run: make build && npx tsx test/bench/authzen.ts (BENCH_SECONDS=3, BENCH_ROUNDS=5; BENCH_PROJECT: another
 * project folder with the scenario's routes and users)
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { createFixture, ROOT, startNode, startServer, stopServer, type Server } from "./fixture.js";
import { freePort } from "../support/free-port.js";
import { fmt, median } from "./measure.js";
import { haveWrk, interleavedRounds, type Load, type SideServer } from "./wrk.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const PROJECT = process.env.BENCH_PROJECT ?? join(ROOT, "examples", "authzen-todo");
const CERBOS = join(ROOT, "node_modules", "@cerbos", "cerbos-linux-x64", "cerbos-linux-x64");
const CERBOS_DIR = join(ROOT, "test", "bench", "cerbos");
const KEY = "bench-pep-key-5e2a9c";

/** The scenario's users: subject id (the interop payload's) and roles (its directory's). */
const USERS: { id: string; roles: string[] }[] = [
  { id: "CiRmZDA2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs", roles: ["admin", "evil_genius"] },
  { id: "CiRmZDE2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs", roles: ["editor"] },
  { id: "CiRmZDI2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs", roles: ["editor"] },
  { id: "CiRmZDM2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs", roles: ["viewer"] },
  { id: "CiRmZDQ2MTRkMy1jMzlhLTQ3ODEtYjdiZC04Yjk2ZjVhNTEwMGQSBWxvY2Fs", roles: ["viewer"] },
];
const QUESTIONS: [string, string][] = [
  ["GET", "/users/{userId}"],
  ["GET", "/todos"],
  ["POST", "/todos"],
  ["PUT", "/todos/{todoId}"],
  ["DELETE", "/todos/{todoId}"],
];
/** The 25 evaluations and the scenario's expected decisions (viewers read only). */
const CASES = USERS.flatMap((u, i) =>
  QUESTIONS.map(([method, route]) => ({ user: u, method, route, expected: i < 3 || method === "GET" })),
);

/** One evaluation as each side is asked it: Portier names the user, Cerbos also gets the roles. */
function evaluation(c: (typeof CASES)[number], side: "portier" | "cerbos") {
  return {
    subject: {
      type: "identity",
      id: c.user.id,
      ...(side === "cerbos" ? { properties: { "cerbos.roles": c.user.roles } } : {}),
    },
    action: { name: c.method },
    resource: { type: "route", id: c.route },
  };
}

function loads(side: "portier" | "cerbos"): { single: Load; batch: Load } {
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (side === "portier") headers.Authorization = `Bearer ${KEY}`;
  const base = { method: "POST" as const, pathTemplate: "/{id}", unique: false };
  return {
    single: {
      ...base,
      target: "/access/v1/evaluation",
      variants: CASES.map((c) => ({ headers, body: JSON.stringify(evaluation(c, side)) })),
    },
    batch: {
      ...base,
      target: "/access/v1/evaluations",
      variants: [{ headers, body: JSON.stringify({ evaluations: CASES.map((c) => evaluation(c, side)) }) }],
    },
  };
}

/** The decisions a side gives the 25, one evaluation at a time and as a batch. */
async function decisions(url: string, side: "portier" | "cerbos"): Promise<{ single: boolean[]; batch: boolean[] }> {
  const { single, batch } = loads(side);
  const ask = async (load: Load, body: string) => {
    const res = await fetch(`${url}${load.target}`, { method: "POST", headers: load.variants[0]!.headers, body });
    if (!res.ok) throw new Error(`${side} ${load.target}: HTTP ${res.status} ${await res.text()}`);
    return (await res.json()) as { decision?: boolean; evaluations?: { decision: boolean }[] };
  };
  const one: boolean[] = [];
  for (const v of single.variants) one.push((await ask(single, v.body!)).decision === true);
  const all = (await ask(batch, batch.variants[0]!.body!)).evaluations?.map((e) => e.decision === true) ?? [];
  return { single: one, batch: all };
}

async function main(): Promise<void> {
  if (!haveWrk()) throw new Error("wrk is not installed (apt-get install wrk)");
  const dir = mkdtempSync(join(tmpdir(), "portier-authzen-bench-"));
  const servers: Server[] = [];
  try {
    const bundle = join(dir, "todo.tar.gz");
    const built = spawnSync(
      process.execPath,
      [join(ROOT, "dist", "cli", "main.js"), "bundle", "build", "--project", PROJECT, "--out", bundle],
      { encoding: "utf8" },
    );
    if (built.status !== 0)
      throw new Error(`portier bundle build --project ${PROJECT}: ${built.stderr}${built.stdout}`);
    const keyFile = join(dir, "pep.key");
    writeFileSync(keyFile, KEY);
    const fixture = await createFixture();
    const portier = await startNode(
      "portier",
      [],
      join(ROOT, "dist", "cli", "main.js"),
      [
        "serve",
        "--issuer",
        "https://auth.bench.example",
        "--jwks",
        fixture.jwksFile,
        "--directory",
        join(PROJECT, "data", "sample", "directory.json"),
        "--bundle",
        bundle,
        "--port",
        "{port}",
        "--workers",
        "1",
        "--authzen-pep-key-file",
        keyFile,
      ],
      { readyPath: "/ready" },
    );
    servers.push(portier);
    const cerbos = await startServer(
      "cerbos",
      CERBOS,
      [
        "server",
        "--config=config.yaml",
        "--set=server.httpListenAddr=127.0.0.1:{port}",
        // Its health check dials the gRPC port: a real one.
        `--set=server.grpcListenAddr=127.0.0.1:${await freePort()}`,
        "--set=server.logRequestPayloads=false",
      ],
      { readyPath: "/_cerbos/health", cwd: CERBOS_DIR, env: { CERBOS_NO_TELEMETRY: "1" } },
    );
    servers.push(cerbos);

    const expected = CASES.map((c) => c.expected);
    for (const [name, s] of [
      ["portier", portier],
      ["cerbos", cerbos],
    ] as const) {
      const got = await decisions(s.url, name);
      const wrong = expected.flatMap((e, i) => (got.single[i] !== e || got.batch[i] !== e ? [i] : []));
      console.log(
        `${name}: ${
          wrong.length === 0
            ? "the scenario's 25 decisions, on both endpoints"
            : `differs on ` +
              `${wrong.length} of 25: ${wrong
                .map((i) => `${CASES[i]!.method} ${CASES[i]!.route} (user ` + `${Math.floor(i / 5) + 1})`)
                .join(", ")}`
        }`,
      );
    }

    const p = loads("portier");
    const c = loads("cerbos");
    const scriptFile = join(dir, "load.lua");
    const rounds = {
      sides: 2,
      rounds: ROUNDS,
      seconds: SECONDS,
      warmUpSeconds: 2,
      connections: 16,
      scriptFile,
      timeoutSeconds: 10,
    };
    const pid = (s: Server) => s.child.pid!;
    const runs = (which: "single" | "batch"): SideServer[] => [
      { name: "portier", url: portier.url, pid: pid(portier), side: 0, load: p[which] },
      { name: "cerbos", url: cerbos.url, pid: pid(cerbos), side: 1, load: c[which] },
    ];
    console.log(
      `\n${ROUNDS} interleaved rounds of ${SECONDS} s, wrk -t1 -c16, one Portier worker, decision log on; ` +
        `${availableParallelism()} CPUs, load ${loadavg()[0]!.toFixed(2)}`,
    );
    console.log("| load | side | req/s | decisions/s | CPU us/decision | p99 ms |");
    console.log("|---|---|---:|---:|---:|---:|");
    for (const [which, perRequest] of [
      ["single", 1],
      ["batch", CASES.length],
    ] as const) {
      const r = await interleavedRounds(runs(which), rounds);
      const row = (side: number) => ({
        rps: median(r.rps[side]!),
        cpu: median(r.cpuUs[side]!) / perRequest,
        p99: median(r.p99Ms[side]!),
      });
      const [po, ce] = [row(0), row(1)];
      const label = which === "single" ? "evaluation (1 per request)" : `evaluations (${perRequest} per request)`;
      for (const [name, m] of [
        ["Portier", po],
        ["Cerbos", ce],
      ] as const)
        console.log(
          `| ${label} | ${name} | ${fmt(m.rps)} | ${fmt(m.rps * perRequest)} | ${m.cpu.toFixed(1)} | ` +
            `${m.p99.toFixed(2)} |`,
        );
      console.log(
        `| ${label} | Portier / Cerbos | ${(po.rps / ce.rps).toFixed(2)}x | | ${(po.cpu / ce.cpu).toFixed(2)}x | ` +
          `${(po.p99 / ce.p99).toFixed(2)}x |`,
      );
    }
  } finally {
    for (const s of servers) await stopServer(s);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
