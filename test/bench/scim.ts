/**
 * SCIM benchmark (issue 39): how fast an identity manager's push reaches decisions, and what sustained pushes
 * cost the decisions.
 * 1. Time from a PATCH's 2xx to the first decision that sees it (the user's `active` flipped, its decision
 *    polled over HTTP until it changes): p50 and p99 of BENCH_SCIM_FLIPS flips, on the same process (journal,
 *    fdatasync per change) and, when PostgreSQL is installed, on a second replica of a fleet (the PATCH taken by
 *    the first; a cluster of the benchmark's own on loopback).
 * 2. Decisions per second (wrk, GET /forward-auth/nginx, fixture.ts's users from the directory file) of the same
 *    service with and without a sustained stream of SCIM changes (BENCH_SCIM_RATE PATCHes per second of other
 *    users, as one identity manager sends them: one at a time), in BENCH_ROUNDS alternating rounds of
 *    BENCH_SECONDS; medians and their ratio. Target: >= 0.9x.
 * BENCH_SCIM_JOURNAL_DIR puts the journal elsewhere (/dev/shm: without the disk's flushes); BENCH_SCIM_THREADPOOL
 * sets the server's UV_THREADPOOL_SIZE.
 * Run: make build && npx tsx test/bench/scim.ts (Portier runs from dist/).
 */
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createFixture, forwardAuthLoad, serveArgs, startServer, stopServer, ROOT, type Server } from "./fixture.js";
import { BENCH_TENANT } from "./directory-probe.js";
import { fmt, median } from "./measure.js";
import { haveWrk, runWrk, treeCpuSeconds } from "./wrk.js";
import { postgresAvailable, startPostgres } from "../support/postgres.js";

const TOKEN = "bench-scim-token";
const FLIPS = Number(process.env.BENCH_SCIM_FLIPS ?? 200);
const RATE = Number(process.env.BENCH_SCIM_RATE ?? 50);
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
  return startServer(name, process.execPath, [join(ROOT, "dist", "cli", "main.js"), ...args], {
    readyPath: "/ready",
    ...(env ? { env } : {}),
  });
}

export async function main(): Promise<void> {
  const f = await createFixture();
  writeFileSync(join(f.dir, "scim-token"), TOKEN);
  const sub = f.claims[0]!.sub as string;
  const token = f.tokens[0]!;

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

  // 2. Decisions per second with and without sustained SCIM changes.
  if (!haveWrk()) {
    console.log("wrk not installed: the throughput comparison is skipped");
    return;
  }
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
    const measure = async (withChanges: boolean) => {
      let stop = false;
      let changes = 0;
      const writer = (async () => {
        const gap = 1000 / RATE;
        let next = performance.now();
        while (!stop && withChanges) {
          const target = others[changes % others.length]!;
          await scim(svc.url, "PATCH", `/Users/${target}`, {
            schemas: [PATCH],
            Operations: [{ op: "replace", path: "displayName", value: `name ${changes}` }],
          });
          changes++;
          next += gap;
          const wait = next - performance.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        }
      })();
      const cpu0 = treeCpuSeconds(svc.child.pid!);
      const r = await runWrk(svc.url, load, { connections: 10, seconds: SECONDS, start, scriptFile });
      const cpu = treeCpuSeconds(svc.child.pid!) - cpu0;
      start += 10_000_000;
      stop = true;
      await writer;
      if (r.bad > 0) throw new Error(`${r.bad} errors or non-2xx answers`);
      // Decisions per second of the server's CPU, its SCIM work included: steadier than req/s on a shared machine.
      return { rps: r.rps, perCpuSecond: r.requests / cpu, changesPerSecond: changes / r.seconds };
    };
    await measure(false); // warm-up
    const without: number[] = [];
    const withC: number[] = [];
    const cpuWithout: number[] = [];
    const cpuWith: number[] = [];
    const rates: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? [false, true] : [true, false];
      for (const w of order) {
        const m = await measure(w);
        if (w) {
          withC.push(m.rps);
          cpuWith.push(m.perCpuSecond);
          rates.push(m.changesPerSecond);
        } else {
          without.push(m.rps);
          cpuWithout.push(m.perCpuSecond);
        }
      }
    }
    const ratio = median(withC) / median(without);
    console.log(
      `decisions/s without SCIM changes ${fmt(median(without))}, with ${median(rates).toFixed(0)} changes/s ` +
        `${fmt(median(withC))}: ${ratio.toFixed(3)}x (target >= 0.9x; medians of ${ROUNDS} rounds of ${SECONDS} s)`,
    );
    const cpuRatio = median(cpuWith) / median(cpuWithout);
    console.log(
      `decisions per server CPU second without ${fmt(median(cpuWithout))}, with ${fmt(median(cpuWith))}: ` +
        `${cpuRatio.toFixed(3)}x (the SCIM work included; load average ${loadavg()[0]!.toFixed(1)})`,
    );
  } finally {
    await stopServer(svc);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
