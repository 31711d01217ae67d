/**
 * Child process of the directory benchmark (test/bench/directory.ts): one measurement in a fresh process,
 * so heaps do not mix. Run: node --expose-gc --import tsx test/bench/directory-probe.ts <task> <impl> <file>
 *   task  memory      heap + ArrayBuffer bytes per record after gc(), load time, memory after 5 reloads
 *                     (BENCH_DIRECTORY_RELOADS)
 *         stall       worst decision latency while the directory reloads (a decision every 1 ms)
 * (Throughput with a large directory is measured from outside, in service.ts, with CPU time per request.)
 *   impl  streaming   loadDirectoryFile (this code)
 *         previous    the loader before it, as a baseline: whole-file string, JSON.parse, a Map of objects
 * Prints one JSON line.
 */
import { readFile, writeFile } from "node:fs/promises";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import pino from "pino";
import { createAccessTokenVerifier } from "../../src/auth/index.js";
import {
  loadDirectoryFile,
  loadRoleResolver,
  type DirectoryEntries,
  type DirectoryEntry,
} from "../../src/directory/index.js";
import type { RoleResolver } from "../../src/directory/role-resolver.js";
import { loadEngine, tokenFacts } from "../../src/engine/index.js";
import { createDecide } from "../../src/service/decide/decide.js";
import { fixedPolicy } from "../support/policy-snapshot.js";

export const BENCH_TENANT = "3f7c1a52-8d1e-4b7a-9c3e-5a2b6d8e9f01";
export const benchSub = (i: number) => `00000000-0000-4000-8000-${i.toString().padStart(12, "0")}`;
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const ROLES = join(ROOT, "data", "roles.json");
const PATH = "/v2/ORG001/elevesJeunes/42/absences";

/** The loader before streaming (kept here as the baseline): one string, JSON.parse, a Map of objects. */
async function previousLoad(file: string, resolve: RoleResolver): Promise<DirectoryEntries> {
  const text = await readFile(file, "utf8");
  const entries = new Map<string, DirectoryEntry>();
  const add = (r: { sub: string; tenant_id: string; roles: string[] }) => {
    const roles: string[] = [];
    for (const name of r.roles) {
      const id = resolve(name);
      if (id && !roles.includes(id)) roles.push(id);
    }
    entries.set(r.sub, { tenant_id: r.tenant_id, names: roles });
  };
  if (text.trimStart().startsWith("[")) for (const r of JSON.parse(text) as []) add(r);
  else {
    let start = 0;
    while (start < text.length) {
      let end = text.indexOf("\n", start);
      if (end < 0) end = text.length;
      const raw = text.slice(start, end).trim();
      start = end + 1;
      if (raw) add(JSON.parse(raw) as Parameters<typeof add>[0]);
    }
  }
  return entries;
}

async function load(impl: string, file: string, resolve: RoleResolver): Promise<DirectoryEntries> {
  // The baseline resolved names at load; the index keeps names and each decision resolves them (one WeakMap lookup).
  return impl === "previous" ? previousLoad(file, resolve) : (await loadDirectoryFile(file)).entries;
}

function gc(): void {
  const g = (globalThis as { gc?: () => void }).gc;
  if (!g) throw new Error("run with --expose-gc");
  g();
  g();
}

const held = () => {
  const m = process.memoryUsage();
  return { heap: m.heapUsed, buffers: m.arrayBuffers, rss: m.rss };
};

async function memory(impl: string, file: string) {
  const resolve = loadRoleResolver(ROLES);
  gc();
  const base = held();
  const t0 = performance.now();
  let entries = await load(impl, file, resolve);
  const loadMs = performance.now() - t0;
  gc();
  const one = held();
  const n = entries.size;
  // What the index costs every major GC while it serves: a full mark-compact with it loaded (best of 3).
  let fullGcMs = Infinity;
  for (let i = 0; i < 3; i++) {
    const g0 = performance.now();
    gc();
    fullGcMs = Math.min(fullGcMs, performance.now() - g0);
  }
  const index = one.heap - base.heap + one.buffers - base.buffers;
  let peakRss = one.rss;
  const reloads = Number(process.env.BENCH_DIRECTORY_RELOADS ?? 5);
  for (let i = 0; i < reloads; i++) {
    entries = await load(impl, file, resolve);
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }
  const rssAfterReloads = process.memoryUsage().rss;
  gc();
  const after = held();
  if (!entries.get(benchSub(n - 1))) throw new Error("last record missing");
  return {
    records: n,
    reloads,
    loadMs,
    fullGcMs,
    heapPerRecord: (one.heap - base.heap) / n,
    buffersPerRecord: (one.buffers - base.buffers) / n,
    bytesPerRecord: index / n,
    indexBytes: index,
    afterReloadsVsOne: (after.heap - base.heap + after.buffers - base.buffers) / index,
    rssAfterReloads: rssAfterReloads - base.rss,
    peakRss: peakRss - base.rss,
  };
}

async function decisionContext(lookup: (sub: string) => DirectoryEntry | undefined) {
  const dir = mkdtempSync(join(tmpdir(), "portier-dirprobe-"));
  const issuer = "https://auth.bench.example";
  const { privateKey, publicKey } = await generateKeyPair("RS256");
  const jwksFile = join(dir, "jwks.json");
  await writeFile(
    jwksFile,
    JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: "b1", alg: "RS256", use: "sig" }] }),
  );
  const now = Math.floor(Date.now() / 1000);
  const claims = {
    iss: issuer,
    sub: benchSub(42),
    client_id: "web",
    tenant_id: BENCH_TENANT,
    auth_time: now,
    idp: "local",
    scope: ["openid", "apiclients"],
    amr: ["pwd"],
    iat: now,
    exp: now + 3600,
  };
  const token = await new SignJWT(claims)
    .setProtectedHeader({ alg: "RS256", kid: "b1", typ: "at+jwt" })
    .sign(privateKey);
  const verifier = createAccessTokenVerifier({ issuer, jwksFile, refreshIntervalMs: 0 });
  await verifier.ready();
  const logger = pino(pino.destination("/dev/null"));
  const policy = fixedPolicy(await loadEngine(join(ROOT, "build", "bundle.tar.gz")), loadRoleResolver(ROLES));
  const decide = createDecide({
    verifier,
    policy,
    directory: { lookup },
    rolesClaim: undefined,
    roleCheck: "enforce",
    logger,
    metrics: undefined,
  });
  const once = async () => {
    const d = await decide({ method: "GET", path: PATH, token }, "bench");
    if (!d.allow) throw new Error(`denied: ${d.reason}`);
  };
  return { once, close: () => verifier.close(), tokenFacts: tokenFacts(claims) };
}

async function stall(impl: string, file: string) {
  const resolve = loadRoleResolver(ROLES);
  let entries = await load(impl, file, resolve);
  const ctx = await decisionContext((sub) => entries.get(sub));
  for (let i = 0; i < 200; i++) await ctx.once();
  const latencies: number[] = [];
  let loading = true;
  // A decision is due 1 ms after the previous one completed; its latency counts from when it was due, so
  // time spent waiting for a busy event loop counts. (Not a fixed rate: on a loaded machine a backlog of
  // due decisions would measure the machine, not the loader.) The longest stretch without a decision is
  // also taken in CPU time: on a shared machine a wall-clock gap can be another process's turn, while CPU
  // time this process spent in it is the loader's doing (GC threads included).
  let worstGapCpuMs = 0;
  let lastCpu = process.cpuUsage();
  const probe = async () => {
    while (loading) {
      const due = performance.now() + 1;
      await new Promise((r) => setTimeout(r, 1));
      await ctx.once();
      const cpu = process.cpuUsage(lastCpu);
      lastCpu = process.cpuUsage();
      worstGapCpuMs = Math.max(worstGapCpuMs, (cpu.user + cpu.system) / 1000);
      latencies.push(performance.now() - due);
    }
  };
  const running = probe();
  await new Promise((r) => setTimeout(r, 200));
  worstGapCpuMs = 0;
  latencies.length = 0;
  const t0 = performance.now();
  entries = await load(impl, file, resolve);
  const reloadMs = performance.now() - t0;
  loading = false;
  await running;
  ctx.close();
  latencies.sort((a, b) => a - b);
  return {
    records: entries.size,
    reloadMs,
    decisions: latencies.length,
    worstDecisionMs: latencies[latencies.length - 1],
    p99DecisionMs: latencies[Math.floor(latencies.length * 0.99)],
    worstGapCpuMs,
  };
}

const TASKS: Record<string, (impl: string, file: string) => Promise<object>> = { memory, stall };

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const [task = "", impl = "", file = ""] = process.argv.slice(2);
  const run = TASKS[task];
  if (!run || !file) throw new Error("usage: directory-probe.ts memory|stall streaming|previous FILE");
  console.log(JSON.stringify(await run(impl, file)));
  process.exit(0);
}
