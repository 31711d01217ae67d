/**
 * SCIM benchmark (issue 39): how fast an identity manager's push reaches decisions, and what sustained pushes
 * cost the decisions.
 * 1. Time from a PATCH's 2xx to the first decision that sees it (the user's `active` flipped, its decision
 *    polled over HTTP until it changes): p50 and p99 of BENCH_SCIM_FLIPS flips, on the same process (journal,
 *    fdatasync per change) and, when PostgreSQL is installed, on a second replica of a fleet (the PATCH taken by
 *    the first; a cluster of the benchmark's own on loopback).
 * 2. Decisions per second (wrk, GET /forward-auth/nginx, fixture.ts's users from the directory file) of one service
 *    without SCIM changes, with BENCH_SCIM_RATE PATCHes per second of other users sent one at a time (one
 *    identity manager's connection), and with BENCH_SCIM_CONCURRENT_RATE per second sent by BENCH_SCIM_CONCURRENCY
 *    connections at once (the journal's group commit flushes them together: flushes per change shown), in
 *    BENCH_ROUNDS rounds of BENCH_SECONDS whose order rotates; medians and their ratios. Target: >= 0.9x.
 * BENCH_SCIM_JOURNAL_DIR puts the journal elsewhere (/dev/shm: without the disk's flushes); BENCH_SCIM_THREADPOOL
 * sets the server's UV_THREADPOOL_SIZE.
 * 3. Start-up of a replica with BENCH_SCIM_STARTUP_USERS users (1M): from an NDJSON file (--directory) and from a
 *    PostgreSQL snapshot (--scim-postgres-url), time to /ready and peak RSS (VmHWM).
 * BENCH_SCIM_ONLY=latency|throughput|startup runs one part (startup runs only when asked: it writes 1M users).
 * Run: make build && npx tsx test/bench/scim.ts (Portier runs from dist/).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createFixture, forwardAuthLoad, serveArgs, startServer, stopServer, ROOT, type Server } from "./fixture.js";
import { BENCH_TENANT } from "./directory-probe.js";
import { fmt, median } from "./measure.js";
import { haveWrk, runWrk, treeCpuSeconds } from "./wrk.js";
import { postgresAvailable, startPostgres } from "../support/postgres.js";
import { writeDirectory } from "./directory.js";
import pgLib from "pg";

const TOKEN = "bench-scim-token";
const FLIPS = Number(process.env.BENCH_SCIM_FLIPS ?? 200);
const RATE = Number(process.env.BENCH_SCIM_RATE ?? 50);
const CONCURRENT_RATE = Number(process.env.BENCH_SCIM_CONCURRENT_RATE ?? 200);
const CONCURRENCY = Number(process.env.BENCH_SCIM_CONCURRENCY ?? 8);
const STARTUP_USERS = Number(process.env.BENCH_SCIM_STARTUP_USERS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const ROUTE = "/v2/ORG001/elevesJeunes/1/absences";

async function scim(
  url: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; id: string }> {
  const res = await fetch(`${url}/scim/v2${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/scim+json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await res.json()) as { id: string };
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return { status: res.status, id: json.id };
}

const user = (sub: string) => ({
  schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
  userName: `${sub}@bench.example`,
  externalId: sub,
  active: true,
  roles: [{ value: "enseignant_jeune" }],
});

async function allowed(url: string, token: string): Promise<boolean> {
  const res = await fetch(`${url}/decide`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ method: "GET", path: ROUTE, token }),
  });
  return ((await res.json()) as { allow: boolean }).allow;
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
}

/** PATCHes `active` on `writer` and polls `reader`'s decisions until they change; milliseconds per flip. */
async function flips(writer: string, reader: string, id: string, token: string): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < FLIPS; i++) {
    const active = i % 2 === 1;
    await scim(writer, "PATCH", `/Users/${id}`, {
      schemas: [PATCH],
      Operations: [{ op: "replace", path: "active", value: active }],
    });
    const t0 = performance.now();
    for (;;) {
      if ((await allowed(reader, token)) === active) break;
      if (performance.now() - t0 > 10_000) throw new Error("a change was not seen within 10 s");
    }
    times.push(performance.now() - t0);
  }
  return times;
}

function scimArgs(dir: string, store: string[]): string[] {
  // The flips deactivate one user hundreds of times: the de-provisioning guard would hold them.
  const guard = ["--scim-max-deprovision-share", "1"];
  return ["--scim-token-file", join(dir, "scim-token"), ...store, "--scim-tenant-id", BENCH_TENANT, ...guard];
}

async function start(name: string, args: string[]): Promise<Server> {
  const env = process.env.BENCH_SCIM_THREADPOOL ? { UV_THREADPOOL_SIZE: process.env.BENCH_SCIM_THREADPOOL } : undefined;
  // BENCH_SCIM_NODE_FLAGS: node flags of the servers (e.g. --cpu-prof to see where a start-up goes).
  const flags = process.env.BENCH_SCIM_NODE_FLAGS?.split(" ").filter(Boolean) ?? [];
  return startServer(name, process.execPath, [...flags, join(ROOT, "dist", "cli", "main.js"), ...args], {
    readyPath: "/ready",
    ...(env ? { env } : {}),
  });
}

export async function main(): Promise<void> {
  const f = await createFixture();
  writeFileSync(join(f.dir, "scim-token"), TOKEN);
  const sub = f.claims[0]!.sub as string;
  const token = f.tokens[0]!;

  const only = process.env.BENCH_SCIM_ONLY;
  if (only === "startup") {
    await startup(f);
    return;
  }
  if (only !== "throughput") await latency(f, sub, token);
  // 2. Decisions per second with and without sustained SCIM changes.
  if (only !== undefined && only !== "throughput") return;
  if (!haveWrk()) {
    console.log("wrk not installed: the throughput comparison is skipped");
    return;
  }
  await throughput(f);
}

/** 1. PATCH 2xx -> first decision that sees it: one process, then a second replica through PostgreSQL. */
async function latency(f: Awaited<ReturnType<typeof createFixture>>, sub: string, token: string): Promise<void> {
  // 1. Single process: the journal.
  const one = await start("scim-journal", serveArgs(f, scimArgs(f.dir, ["--scim-journal", join(f.dir, "a.journal")])));
  let id: string;
  try {
    id = (await scim(one.url, "POST", "/Users", user(sub))).id;
    const t = await flips(one.url, one.url, id, token);
    console.log(
      `PATCH 2xx -> first decision that sees it, same process (journal): p50 ${percentile(t, 0.5).toFixed(2)} ms, ` +
        `p99 ${percentile(t, 0.99).toFixed(2)} ms (${FLIPS} flips; one decision over HTTP is the floor)`,
    );
  } finally {
    await stopServer(one);
  }

  // 1b. A fleet: PATCH on replica A, decisions on replica B.
  if (postgresAvailable) {
    const pg = await startPostgres();
    const store = ["--scim-postgres-url", pg.url];
    const a = await start("scim-pg-a", serveArgs(f, scimArgs(f.dir, store)));
    const b = await start("scim-pg-b", serveArgs(f, scimArgs(f.dir, store)));
    try {
      const created = (await scim(a.url, "POST", "/Users", user(sub))).id;
      const t = await flips(a.url, b.url, created, token);
      console.log(
        `PATCH 2xx on replica A -> first decision on replica B (PostgreSQL, LISTEN/NOTIFY): p50 ` +
          `${percentile(t, 0.5).toFixed(2)} ms, p99 ${percentile(t, 0.99).toFixed(2)} ms (${FLIPS} flips)`,
      );
    } finally {
      await Promise.all([stopServer(a), stopServer(b)]);
      pg.destroy();
    }
  } else console.log("PostgreSQL not installed: the fleet figure is skipped");
}

/** Time from spawn to /ready answering 200, the CPU seconds spent, and the peak resident memory (VmHWM) then. */
async function timedStart(
  name: string,
  args: string[],
): Promise<{ seconds: number; cpuSeconds: number; peakMiB: number }> {
  const t0 = performance.now();
  const server = await start(name, args);
  const seconds = (performance.now() - t0) / 1000;
  const cpuSeconds = treeCpuSeconds(server.child.pid!);
  const status = readFileSync(`/proc/${server.child.pid}/status`, "utf8");
  const kib = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? NaN);
  await stopServer(server);
  return { seconds, cpuSeconds, peakMiB: kib / 1024 };
}

/**
 * 3. A replica's start-up with STARTUP_USERS users: from an NDJSON directory file (--directory) and from a
 * PostgreSQL snapshot (--scim-postgres-url, the same subs and role names as SCIM users written by SQL), against the
 * same service with the fixture's 100-user file (the fixed cost of a start); time to /ready and peak RSS.
 */
async function startup(f: Awaited<ReturnType<typeof createFixture>>): Promise<void> {
  if (!postgresAvailable) {
    console.log("PostgreSQL not installed: the start-up comparison is skipped");
    return;
  }
  const file = join(f.dir, "startup.ndjson");
  await writeDirectory(file, STARTUP_USERS, "ndjson");
  const pg = await startPostgres();
  try {
    const store = ["--scim-postgres-url", pg.url];
    const scimOnly = [...scimArgs(f.dir, store), "--scim-max-resources", String(Math.max(2_000_000, STARTUP_USERS))];
    // A first replica creates the tables; the users are then written the way the store keeps them.
    await stopServer(await start("scim-schema", serveArgs(f, scimOnly)));
    const db = new pgLib.Client({ connectionString: pg.url });
    await db.connect();
    try {
      await db.query(SEED_USERS, [STARTUP_USERS]);
      await db.query("INSERT INTO portier_scim_steps (rev, changes) VALUES (1, '[]')");
      await db.query("VACUUM ANALYZE portier_scim_resources");
    } finally {
      await db.end();
    }
    const runs: [string, string[]][] = [
      ["100-user file (the fixed cost)", serveArgs(f)],
      [`${STARTUP_USERS}-user NDJSON file (--directory)`, serveArgs(f, [], { directory: file })],
      [`${STARTUP_USERS} SCIM users from PostgreSQL`, withoutDirectory(serveArgs(f, scimOnly))],
    ];
    console.log(`start-up to /ready (load average ${loadavg()[0]!.toFixed(1)}):`);
    for (const [name, args] of runs) {
      const r = await timedStart("startup", args);
      console.log(
        `  ${name}: ${r.seconds.toFixed(2)} s (${r.cpuSeconds.toFixed(2)} s of CPU), ` +
          `peak RSS ${r.peakMiB.toFixed(0)} MiB`,
      );
    }
  } finally {
    pg.destroy();
  }
}

/** serve's arguments with no --directory (every user from SCIM). */
function withoutDirectory(args: string[]): string[] {
  const at = args.indexOf("--directory");
  return at < 0 ? args : [...args.slice(0, at), ...args.slice(at + 2)];
}

/** STARTUP_USERS SCIM users as the store keeps them: the subs and role names of writeDirectory's records. */
const SEED_USERS = `
INSERT INTO portier_scim_resources (type, id, rev, resource)
SELECT 'User', id, 1, jsonb_build_object(
  'schemas', jsonb_build_array('urn:ietf:params:scim:schemas:core:2.0:User'),
  'id', id, 'userName', sub || '@bench.example', 'externalId', sub, 'active', true,
  'roles', CASE i % 3
    WHEN 0 THEN '[{"value":"enseignant_jeune"}]'::jsonb
    WHEN 1 THEN '[{"value":"parent_eleve_jeune"}]'::jsonb
    ELSE '[{"value":"Enseignant jeune"},{"value":"directeur_jeune"}]'::jsonb END,
  'meta', jsonb_build_object('resourceType', 'User', 'created', '2026-11-28T00:00:00.000Z',
    'lastModified', '2026-11-28T00:00:00.000Z', 'version', 'W/"1"'))
FROM (SELECT i, md5(i::text)::uuid::text AS id, '00000000-0000-4000-8000-' || lpad(i::text, 12, '0') AS sub
      FROM generate_series(0, $1::int - 1) AS i) AS users`;

interface Pace {
  name: string;
  /** Changes per second in all (0: none), and the requests in flight at once. */
  rate: number;
  concurrency: number;
}

const PACES: Pace[] = [
  { name: "without changes", rate: 0, concurrency: 1 },
  { name: "one at a time", rate: RATE, concurrency: 1 },
  { name: "concurrent", rate: CONCURRENT_RATE, concurrency: CONCURRENCY },
];

/** The journal's steps written and flushes, from /ready. */
async function journalCounts(url: string): Promise<{ written: number; flushes: number }> {
  const ready = (await (await fetch(`${url}/ready`)).json()) as {
    scim: { store: { written: number; flushes: number } };
  };
  return { written: ready.scim.store.written, flushes: ready.scim.store.flushes };
}

/**
 * Decisions per second (wrk) of one service with no SCIM changes, with changes sent one at a time, and with
 * changes sent by CONCURRENCY requests at once, in rounds whose order rotates; medians per pace.
 */
async function throughput(f: Awaited<ReturnType<typeof createFixture>>): Promise<void> {
  // BENCH_SCIM_JOURNAL_DIR: the journal elsewhere (e.g. /dev/shm, to see what the disk's flushes cost).
  const journalDir = process.env.BENCH_SCIM_JOURNAL_DIR ?? f.dir;
  const journal = join(journalDir, `portier-bench-${process.pid}.journal`);
  const svc = await start("scim-load", serveArgs(f, scimArgs(f.dir, ["--scim-journal", journal])));
  try {
    const others: string[] = [];
    for (let i = 0; i < 200; i++) others.push((await scim(svc.url, "POST", "/Users", user(`bench-other-${i}`))).id);
    const load = forwardAuthLoad(f);
    const scriptFile = join(f.dir, "scim-load.lua");
    let start = 1_000_000;
    let changes = 0;
    const measure = async (pace: Pace) => {
      let stop = false;
      let sent = 0;
      // Each sender keeps its share of the rate, one request at a time (an identity manager's connection).
      const sender = async () => {
        const gap = (1000 * pace.concurrency) / pace.rate;
        let next = performance.now();
        while (!stop) {
          const target = others[changes++ % others.length]!;
          await scim(svc.url, "PATCH", `/Users/${target}`, {
            schemas: [PATCH],
            Operations: [{ op: "replace", path: "displayName", value: `name ${changes}` }],
          });
          sent++;
          next += gap;
          const wait = next - performance.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        }
      };
      const counts0 = await journalCounts(svc.url);
      const senders = pace.rate > 0 ? Array.from({ length: pace.concurrency }, sender) : [];
      const cpu0 = treeCpuSeconds(svc.child.pid!);
      const r = await runWrk(svc.url, load, { connections: 10, seconds: SECONDS, start, scriptFile });
      const cpu = treeCpuSeconds(svc.child.pid!) - cpu0;
      start += 10_000_000;
      stop = true;
      await Promise.all(senders);
      const counts = await journalCounts(svc.url);
      if (r.bad > 0) throw new Error(`${r.bad} errors or non-2xx answers`);
      const written = counts.written - counts0.written;
      return {
        rps: r.rps,
        // Decisions per second of the server's CPU, its SCIM work included: steadier than req/s on a shared machine.
        perCpuSecond: r.requests / cpu,
        changesPerSecond: sent / r.seconds,
        flushesPerChange: written ? (counts.flushes - counts0.flushes) / written : 0,
      };
    };
    await measure(PACES[0]!); // warm-up
    const got = PACES.map(() => ({
      rps: [] as number[],
      cpu: [] as number[],
      rate: [] as number[],
      fpc: [] as number[],
    }));
    for (let round = 0; round < ROUNDS; round++) {
      // The order rotates, so that no pace always follows the same one.
      for (let k = 0; k < PACES.length; k++) {
        const p = (round + k) % PACES.length;
        const m = await measure(PACES[p]!);
        got[p]!.rps.push(m.rps);
        got[p]!.cpu.push(m.perCpuSecond);
        got[p]!.rate.push(m.changesPerSecond);
        got[p]!.fpc.push(m.flushesPerChange);
      }
    }
    const base = got[0]!;
    console.log(
      `decisions/s without SCIM changes ${fmt(median(base.rps))} (${fmt(median(base.cpu))} per server CPU second); ` +
        `medians of ${ROUNDS} rounds of ${SECONDS} s, target >= 0.9x:`,
    );
    for (let p = 1; p < PACES.length; p++) {
      const g = got[p]!;
      console.log(
        `  with ${median(g.rate).toFixed(0)} changes/s ${PACES[p]!.name} (${PACES[p]!.concurrency} in flight): ` +
          `${fmt(median(g.rps))} decisions/s, ${(median(g.rps) / median(base.rps)).toFixed(3)}x; per server CPU ` +
          `second ${(median(g.cpu) / median(base.cpu)).toFixed(3)}x; ${median(g.fpc).toFixed(2)} flushes per change`,
      );
    }
    console.log(`  load average ${loadavg()[0]!.toFixed(1)} at the end (2 cores)`);
  } finally {
    await stopServer(svc);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
