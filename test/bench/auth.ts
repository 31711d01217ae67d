/**
 * Token-verification benchmark: access-token verifications per second for jose's bare jwtVerify with
 * a local key (baseline), our verifier with the cache off, and our verifier with the cache on, all in
 * this process with interleaved rounds. Each ratio is the median over the rounds of (ours / baseline in the
 * same round), so load from other processes on this shared machine hits both sides of every pair alike; the
 * ratio is given by throughput and by CPU time per verification (baseline CPU / ours: above 1 is faster).
 * Run: npx tsx test/bench/auth.ts
 */
import { mkdtempSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { generateKeyPair, exportJWK, jwtVerify, SignJWT } from "jose";
import { createAccessTokenVerifier } from "../../src/auth/index.js";
import { rateAndCpuAsync, fmt } from "./measure.js";

const ISSUER = "https://id.bench.example";

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

export async function main(): Promise<void> {
  const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid: "bench", alg: "RS256", use: "sig" };
  const dir = mkdtempSync(join(tmpdir(), "portier-bench-auth-"));
  const file = join(dir, "jwks.json");
  writeFileSync(file, JSON.stringify({ keys: [jwk] }));
  const now = Math.floor(Date.now() / 1000);
  const token = await new SignJWT({
    client_id: "portier-demo-web",
    sub: "0b8a3f2e-1c4d-4e5f-8a9b-0c1d2e3f4a5b",
    scope: ["openid", "email", "profile", "apiclients"],
    amr: ["pwd"],
    idp: "local",
    tenant_id: "3f7c1a52-8d1e-4b7a-9c3e-5a2b6d8e9f01",
    auth_time: now,
    aud: "apiclients",
  })
    .setProtectedHeader({ alg: "RS256", kid: "bench", typ: "at+jwt" })
    .setIssuer(ISSUER)
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .sign(privateKey);

  const uncached = createAccessTokenVerifier({ issuer: ISSUER, jwksFile: file, cacheSize: 0 });
  const cached = createAccessTokenVerifier({ issuer: ISSUER, jwksFile: file });
  await Promise.all([uncached.ready(), cached.ready()]);

  const fns: Array<[string, () => Promise<unknown>]> = [
    [
      "(a) jose jwtVerify, local key (baseline)",
      () => jwtVerify(token, publicKey, { issuer: ISSUER, algorithms: ["RS256"] }),
    ],
    ["(b) Portier verifier, uncached", () => uncached.verify(token)],
    ["(c) Portier verifier, cached", () => cached.verify(token)],
  ];
  for (const [, fn] of fns) await rateAndCpuAsync(fn, 8, 150); // warm up
  const ROUNDS = 9;
  const samples: number[][] = fns.map(() => []);
  const cpu: number[][] = fns.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate which side goes first, so neither always follows the same neighbour.
    const order = round % 2 === 0 ? [0, 1, 2] : [1, 0, 2];
    for (const i of order) {
      const m = await rateAndCpuAsync(fns[i]![1], 8, 250);
      samples[i]!.push(m.rate);
      cpu[i]!.push(m.cpuUs);
    }
  }
  const rates = samples.map(median);
  const ratio = (i: number) => median(samples[i]!.map((r, round) => r / samples[0]![round]!));
  // CPU per verification is what a loaded machine disturbs least: baseline's CPU / ours, so above 1 is faster.
  const cpuRatio = (i: number) => median(cpu[i]!.map((c, round) => cpu[0]![round]! / c));
  console.log(
    `auth: RS256 access-token verifications per second (median of ${ROUNDS} interleaved rounds, 8 in flight)`,
  );
  for (const [i, [name]] of fns.entries())
    console.log(
      `  ${name.padEnd(44)} ${fmt(rates[i]!).padStart(10)} ${median(cpu[i]!).toFixed(0).padStart(6)} us CPU each`,
    );
  console.log(
    `  ratio b/a (uncached vs jose) ${ratio(1).toFixed(3)} throughput, ${cpuRatio(1).toFixed(3)} by CPU per ` +
      `verification`,
  );
  console.log(
    `  ratio c/a (cached vs jose)   ${ratio(2).toFixed(3)} throughput, ${cpuRatio(2).toFixed(3)} by CPU per ` +
      `verification`,
  );
  uncached.close();
  cached.close();
  rmSync(dir, { recursive: true, force: true });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
