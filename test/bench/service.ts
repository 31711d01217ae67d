/**
 * Decision-service benchmark, one run: autocannon (keep-alive, bounded seconds) against
 *   - a bare node:http server answering a fixed JSON (the baseline),
 *   - Portier POST /decide and GET /forward-auth/nginx (token cache warm, decision log on, to /dev/null),
 *   - the real OPA server (`opa run --server`, pinned binary) answering POST /v1/data/portier/decision
 *     with the same decision input (claims already verified),
 * each in its own process; then in-process decisions per second (normalise + cached verify + evaluate)
 * (the directory is measured in directory.ts). Run: npx tsx test/bench/service.ts
 * (BENCH_SECONDS, BENCH_CONNECTIONS to change the load).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { mkdtempSync, openSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { createAccessTokenVerifier } from "../../src/auth/index.js";
import { loadEngine, normalisePath, tokenFacts } from "../../src/engine/index.js";
import { fmt, rateAsync } from "./measure.js";

interface Histogram { p50: number; p99: number; average: number }
interface AutocannonResult { requests: { average: number; total: number }; latency: Histogram; non2xx: number; errors: number }
type Autocannon = (opts: Record<string, unknown>) => Promise<AutocannonResult>;
const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon;

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CLI = join(ROOT, "src", "cli", "main.ts");
const ISSUER = "https://auth.bench.example";
const TENANT = "3f7c1a52-8d1e-4b7a-9c3e-5a2b6d8e9f01";
const SUB = "11111111-1111-4111-8111-111111111111";
const PATH = "/v2/ORG001/elevesJeunes/42/absences";
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function waitFor(url: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not come up`);
}

function stop(p: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (p.exitCode !== null || p.signalCode !== null) return resolve();
    p.once("exit", () => resolve());
    p.kill("SIGTERM");
    setTimeout(() => p.kill("SIGKILL"), 3000).unref();
  });
}

async function load(name: string, opts: Record<string, unknown>): Promise<{ name: string; rps: number; p50: number; p99: number; bad: number }> {
  const r = await autocannon({ connections: CONNECTIONS, pipelining: 1, duration: SECONDS, ...opts });
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, bad: r.non2xx + r.errors };
}

export async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "portier-bench-"));
  const devNull = openSync("/dev/null", "w");
  const children: ChildProcess[] = [];
  try {
    // Keys, token, directory.
    const { privateKey, publicKey } = await generateKeyPair("RS256");
    const jwksFile = join(dir, "jwks.json");
    writeFileSync(jwksFile, JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: "b1", alg: "RS256", use: "sig" }] }));
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: ISSUER, sub: SUB, client_id: "web", tenant_id: TENANT, auth_time: now, idp: "local", scope: ["openid", "apiclients"], amr: ["pwd"], iat: now, exp: now + 3600 };
    const token = await new SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: "b1", typ: "at+jwt" }).sign(privateKey);
    const directory = join(dir, "directory.json");
    writeFileSync(directory, JSON.stringify([{ sub: SUB, tenant_id: TENANT, roles: ["enseignant_jeune"] }]));
    const input = { method: "GET", path: PATH, token: tokenFacts(claims), roles: ["enseignant_jeune"], synced: true, role_check: "enforce" };

    // Bare node:http baseline, answering a decision-sized fixed JSON.
    const barePort = await freePort();
    const fixed = JSON.stringify({ decision_id: "00000000-0000-4000-8000-000000000000", allow: true, status: 200, reason: "allowed", flow: "accessCode", deprecated: true });
    const bare = spawn(process.execPath, ["-e", `require("node:http").createServer((q,s)=>{q.resume();q.on("end",()=>{s.writeHead(200,{"content-type":"application/json"});s.end(${JSON.stringify(fixed)})})}).listen(${barePort},"127.0.0.1")`], { stdio: "ignore" });
    children.push(bare);

    // Portier, one worker, decision log on (written to /dev/null).
    const portierPort = await freePort();
    const portier = spawn(process.execPath, ["--import", "tsx", CLI, "serve", "--issuer", ISSUER, "--jwks", jwksFile, "--directory", directory, "--port", String(portierPort), "--workers", "1"], { cwd: ROOT, stdio: ["ignore", devNull, "inherit"] });
    children.push(portier);

    // OPA, the pinned binary, with a Rego bundle of the same policy sources and data (this OPA build
    // has no wasm engine, so it cannot run policy.wasm itself; `opa build` without -t wasm instead).
    const opa = spawnSync("bash", [join(ROOT, "tools", "ensure-opa.sh")], { encoding: "utf8" }).stdout.trim();
    const opaBundle = join(dir, "rego-bundle.tar.gz");
    const built = spawnSync(opa, ["build", "--ignore", "*_test.rego", "-o", opaBundle, join(ROOT, "policies"), join(ROOT, "build", "bundle-data")], { encoding: "utf8" });
    let opaUrl: string | undefined;
    if (built.status === 0) {
      const opaPort = await freePort();
      const server = spawn(opa, ["run", "--server", "--addr", `127.0.0.1:${opaPort}`, "--log-level", "error", "--bundle", opaBundle], { stdio: "ignore" });
      children.push(server);
      opaUrl = `http://127.0.0.1:${opaPort}`;
    } else {
      console.log(`OPA bundle build failed, OPA skipped: ${built.stderr}`);
    }

    await waitFor(`http://127.0.0.1:${barePort}/`);
    await waitFor(`http://127.0.0.1:${portierPort}/ready`);
    if (opaUrl) await waitFor(`${opaUrl}/health`);
    const portierUrl = `http://127.0.0.1:${portierPort}`;

    // Sanity: each answers the same decision.
    const check = await (await fetch(`${portierUrl}/decide`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ method: "GET", path: PATH, token }) })).json() as { allow: boolean };
    if (!check.allow) throw new Error("Portier did not allow the benchmark request");
    if (opaUrl) {
      const o = await (await fetch(`${opaUrl}/v1/data/portier/decision`, { method: "POST", body: JSON.stringify({ input }) })).json() as { result?: { allow?: boolean } };
      if (o.result?.allow !== true) throw new Error(`OPA did not allow the benchmark request: ${JSON.stringify(o)}`);
    }

    console.log(`HTTP, ${CONNECTIONS} keep-alive connections, ${SECONDS}s each (load generator in this process):`);
    const decideBody = JSON.stringify({ method: "GET", path: PATH, token });
    const runs = [];
    // Warm-up (JIT, token cache), not reported.
    await autocannon({ url: `${portierUrl}/decide`, method: "POST", headers: { "content-type": "application/json" }, body: decideBody, connections: CONNECTIONS, duration: 1 });
    runs.push(await load("bare node:http (fixed JSON)", { url: `http://127.0.0.1:${barePort}/` }));
    runs.push(await load("Portier POST /decide", { url: `${portierUrl}/decide`, method: "POST", headers: { "content-type": "application/json" }, body: decideBody }));
    runs.push(await load("Portier GET /forward-auth/nginx", { url: `${portierUrl}/forward-auth/nginx`, headers: { "x-original-method": "GET", "x-original-uri": PATH, authorization: `Bearer ${token}` } }));
    if (opaUrl) runs.push(await load("OPA POST /v1/data/portier/decision", { url: `${opaUrl}/v1/data/portier/decision`, method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ input }) }));
    const bareRps = runs[0]!.rps;
    const opaRun = runs.find((r) => r.name.startsWith("OPA"));
    for (const r of runs) {
      const vsBare = `${(r.rps / bareRps).toFixed(2)}x bare`;
      const vsOpa = opaRun && !r.name.startsWith("OPA") && !r.name.startsWith("bare") ? `, ${(r.rps / opaRun.rps).toFixed(2)}x OPA throughput, p99 ${(r.p99 / Math.max(opaRun.p99, 0.001)).toFixed(2)}x OPA's` : "";
      console.log(`  ${r.name.padEnd(36)} ${fmt(r.rps).padStart(9)}  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  (${vsBare}${vsOpa})${r.bad ? `  ${r.bad} non-2xx/errors!` : ""}`);
    }

    // In-process: normalise + cached verify + evaluate.
    const engine = await loadEngine(join(ROOT, "build", "bundle.tar.gz"));
    const verifier = createAccessTokenVerifier({ issuer: ISSUER, jwksFile, refreshIntervalMs: 0 });
    await verifier.ready();
    const once = async () => {
      const p = normalisePath(`${PATH}?page=1`);
      if (!p.ok) throw new Error(p.message);
      const v = await verifier.verify(token);
      const d = await engine.decide({ method: "GET", path: p.path, token: tokenFacts(v.claims), roles: ["enseignant_jeune"], synced: true, role_check: "enforce" });
      if (!d.allow) throw new Error("denied");
    };
    await rateAsync(once, 1, 300);
    const inProcess = await rateAsync(once, 1, 2000);
    console.log(`In-process decisions (normalise + cached verify + evaluate): ${fmt(inProcess)}`);
    verifier.close();
    await engine.close();
  } finally {
    await Promise.all(children.map(stop));
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
