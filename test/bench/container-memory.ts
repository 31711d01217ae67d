/**
 * The memory figures behind deploy/kubernetes' requests and limits: one `portier serve --workers 1` process (a
 * pod's container) with the sample directory and with 1M directory records (NDJSON, writeDirectory of
 * directory.ts), its resident set (VmRSS) once ready and after 2,000 decisions, and its peak (VmHWM) across a
 * reload of the whole directory (old and new index coexist while the new one is built).
 * Run: npx tsx test/bench/container-memory.ts (BENCH_DIRECTORY_RECORDS changes the large count).
 */
import { spawn } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportJWK, generateKeyPair } from "jose";
import { writeDirectory } from "./directory.js";
import { PORTIER_BIN } from "../support/portier-bin.js";
import { freePort } from "../support/free-port.js";
import { until } from "../support/until.js";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";

const RECORDS = Number(process.env.BENCH_DIRECTORY_RECORDS ?? 1_000_000);
const MiB = 1024 * 1024;

function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)![1]) * 1024;
  return { rss: kib("VmRSS"), peak: kib("VmHWM") };
}

async function measure(label: string, directory: string, reload: () => Promise<number>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "portier-memory-"));
  const { publicKey } = await generateKeyPair("RS256");
  writeFileSync(join(dir, "jwks.json"), JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: "k1" }] }));
  const [port, adminPort] = [await freePort(), await freePort()];
  const started = Date.now();
  const proc = spawn(
    process.execPath,
    [PORTIER_BIN, "serve", "--issuer", "https://auth.example.org", "--jwks", join(dir, "jwks.json")]
      .concat(["--directory", directory, "--workers", "1", "--port", String(port), "--admin-port", String(adminPort)])
      .concat(["--log-level", "warn"]),
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  try {
    const ready = async () =>
      (await fetch(`http://127.0.0.1:${adminPort}/ready`).catch(() => undefined))?.status === 200;
    await until(ready, 300_000, 100);
    const readyMs = Date.now() - started;
    const atReady = memory(proc.pid!);
    for (let i = 0; i < 2000; i++)
      await fetch(`http://127.0.0.1:${port}/decide`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ method: "GET", path: `/v2/ORG001/centres/${i}`, token: "x.y.z" }),
      }).then((r) => r.arrayBuffer());
    const afterDecisions = memory(proc.pid!);
    const size = async () => {
      const m = (await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text()).match(
        /^portier_directory_size (\d+)/m,
      );
      return Number(m?.[1] ?? -1);
    };
    // The new file has one record fewer: the size metric tells when it replaced the old index.
    const expected = await reload();
    const reloaded = await until(async () => (await size()) === expected, 300_000, 200).then(
      () => true,
      () => false,
    );
    const afterReload = memory(proc.pid!);
    const mib = (n: number) => `${(n / MiB).toFixed(0)} MiB`;
    console.log(
      `${label}: ready in ${readyMs} ms, RSS ${mib(atReady.rss)} at ready, ${mib(afterDecisions.rss)} after 2,000 ` +
        `decisions, ${mib(afterReload.rss)} after a reload (${reloaded ? "reloaded" : "reload NOT seen"}); ` +
        `peak RSS ${mib(afterReload.peak)}`,
    );
  } finally {
    proc.kill("SIGTERM");
    await new Promise((resolve) => proc.once("exit", resolve));
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "portier-memory-dirs-"));
  try {
    const sample = join(dir, "sample.json");
    copyFileSync(join(PROJECT_ROOT, "data", "sample", "directory.json"), sample);
    await measure("sample directory", sample, () => {
      const records = JSON.parse(readFileSync(sample, "utf8")) as unknown[];
      writeFileSync(`${sample}.tmp`, JSON.stringify(records.slice(1)));
      renameSync(`${sample}.tmp`, sample);
      return Promise.resolve(records.length - 1);
    });
    const large = join(dir, "large.ndjson");
    await writeDirectory(large, RECORDS, "ndjson");
    await measure(`${RECORDS.toLocaleString("en")} records`, large, async () => {
      await writeDirectory(`${large}.tmp`, RECORDS - 1, "ndjson");
      renameSync(`${large}.tmp`, large);
      return RECORDS - 1;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
