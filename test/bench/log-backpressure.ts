/**
 * Memory under log back-pressure (issue 9 item 14), one run: `portier serve` (one worker) with its stdout a
 * pipe nobody reads, sent N decisions (default 200,000, in /decide batches of 100, half unauthenticated
 * garbage, half valid machine tokens); prints the service's RSS before and after, its peak, the dropped-line
 * counter and buffer gauge when the build has them, and how long SIGTERM takes to stop it.
 * Run: npx tsx test/bench/log-backpressure.ts [ROOT]   (ROOT: a built checkout, default this one; DECISIONS=N;
 * DRAIN=1 reads and discards stdout instead, the baseline: what the same load costs with a healthy reader)
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { exportJWK, generateKeyPair, SignJWT } from "jose";

const ROOT = resolve(process.argv[2] ?? fileURLToPath(new URL("../../", import.meta.url)));
const DECISIONS = Number(process.env.DECISIONS ?? 200_000);
const BATCH = 100;
const CONCURRENCY = 4;
const DRAIN = process.env.DRAIN === "1";
const ISSUER = "https://auth.bench.example";

function memory(pid: number): { rssMiB: number; peakMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
  return { rssMiB: kib("VmRSS") / 1024, peakMiB: kib("VmHWM") / 1024 };
}

async function main(): Promise<void> {
  const { privateKey, publicKey } = await generateKeyPair("RS256");
  const dir = mkdtempSync(join(tmpdir(), "portier-logbp-"));
  const jwks = join(dir, "jwks.json");
  writeFileSync(
    jwks,
    JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: "b1", alg: "RS256", use: "sig" }] }),
  );
  const now = Math.floor(Date.now() / 1000);
  const machine = await new SignJWT({
    iss: ISSUER,
    iat: now,
    exp: now + 3600,
    aud: "apiclients",
    client_id: "bench",
    scope: "apiclients",
  })
    .setProtectedHeader({ alg: "RS256", kid: "b1", typ: "at+jwt" })
    .sign(privateKey);

  const proc = spawn(
    process.execPath,
    [
      join(ROOT, "dist", "cli", "main.js"),
      "serve",
      "--issuer",
      ISSUER,
      "--jwks",
      jwks,
      "--no-directory",
      "--bundle",
      join(ROOT, "build", "bundle.tar.gz"),
      "--port",
      "0",
      "--workers",
      "1",
    ],
    { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] },
  );
  // Read stdout only until the "listening" line, then never again (or, with DRAIN, read and discard it).
  const url = await new Promise<string>((resolveUrl, reject) => {
    let out = "";
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /"url":"(http:[^"]+)"/.exec(out);
      if (!m) return;
      proc.stdout.off("data", onData);
      if (DRAIN) proc.stdout.resume();
      else proc.stdout.pause();
      resolveUrl(m[1]!);
    };
    proc.stdout.on("data", onData);
    proc.once("exit", (code) => reject(new Error(`serve exited ${code}: ${out}`)));
  });
  const pid = proc.pid!;
  const body = JSON.stringify({
    requests: Array.from({ length: BATCH }, (_, i) => ({
      method: "GET",
      path: `/v2/ORG${i % 7}/centres`,
      token: i % 2 ? machine : `garbage.${i}.token`,
    })),
  });
  const metrics = async () => {
    const text = await (await fetch(`${url}/metrics`)).text();
    const value = (name: string) =>
      /^(\S+) (\S+)$/m.exec(text.split("\n").find((l) => l.startsWith(`${name} `)) ?? "")?.[2] ?? "n/a";
    return { dropped: value("portier_log_lines_dropped_total"), buffered: value("portier_log_buffer_bytes") };
  };

  await fetch(`${url}/decide`, { method: "POST", headers: { "content-type": "application/json" }, body });
  const before = memory(pid);
  const started = Date.now();
  let sent = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (sent < DECISIONS) {
        sent += BATCH;
        const res = await fetch(`${url}/decide`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
        });
        if (res.status !== 200) throw new Error(`decide answered ${res.status}`);
        await res.arrayBuffer();
      }
    }),
  );
  const seconds = (Date.now() - started) / 1000;
  const after = memory(pid);
  const m = await metrics();
  console.log(`root: ${ROOT}`);
  console.log(`decisions: ${sent} in ${seconds.toFixed(1)} s, stdout ${DRAIN ? "read and discarded" : "not read"}`);
  console.log(
    `RSS before: ${before.rssMiB.toFixed(1)} MiB, after: ${after.rssMiB.toFixed(1)} MiB ` +
      `(growth ${(after.rssMiB - before.rssMiB).toFixed(1)} MiB), peak ${after.peakMiB.toFixed(1)} MiB`,
  );
  console.log(`portier_log_lines_dropped_total: ${m.dropped}, portier_log_buffer_bytes: ${m.buffered}`);

  const stopAsked = Date.now();
  const exited = new Promise<string>((r) =>
    proc.once("exit", (code, signal) => r(`${code ?? signal} after ${Date.now() - stopAsked} ms`)),
  );
  proc.kill("SIGTERM");
  const kill = setTimeout(() => proc.kill("SIGKILL"), 10_000);
  console.log(`SIGTERM: exited ${await exited}`);
  clearTimeout(kill);
}

await main();
