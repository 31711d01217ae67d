/**
 * Engine benchmark: decisions per second through the SDK, against the SDK's own marshalling floor
 * (JSON.stringify + encode of the same input, decode + JSON.parse of the same answer) and against a
 * trivial compiled policy, all measured in this process; then the worker pool at 1 and 2 workers.
 * Run: npx tsx test/bench/engine.ts (needs build/bundle.tar.gz: make policies).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { loadEngine, type DecisionInput, type InProcessEngine, type WorkerPoolEngine } from "../../src/engine/index.js";
import { opaPath } from "../../src/toolchain/opa.js";
import { PolicyInstance } from "../../src/engine/policy-instance.js";
import { readBundle } from "../../src/engine/read-bundle.js";
import { BUNDLE } from "../support/bundle.js";
import { compareSync, rateAsync, fmt } from "./measure.js";

const INPUT: DecisionInput = {
  method: "GET",
  path: "/v2/ORG001/elevesJeunes/42/absences",
  token: { sub: "0b8a3f2e-1c4d-4e5f-8a9b-0c1d2e3f4a5b", client_id: "portier-demo-web", scope: ["openid", "email", "profile", "apiclients"], auth_time: 1763880000, idp: "local", tenant_id: "3f7c1a52-8d1e-4b7a-9c3e-5a2b6d8e9f01" },
  roles: ["enseignant_jeune"],
  synced: true,
  role_check: "enforce",
};

/** The same call by an application (client-credentials) token: no role check, no role message. */
const APPLICATION_INPUT: DecisionInput = { ...INPUT, token: { client_id: "m1", aud: ["apiclients"], scope: ["apiclients"], tenant_id: "3f7c1a52-8d1e-4b7a-9c3e-5a2b6d8e9f01" }, roles: [], synced: false };

async function trivialInstance(): Promise<PolicyInstance> {
  const dir = mkdtempSync(join(tmpdir(), "portier-trivial-"));
  writeFileSync(join(dir, "t.rego"), "package trivial\n\nallow := true\n");
  execFileSync(opaPath(), ["build", "-t", "wasm", "-e", "trivial/allow", "-o", join(dir, "b.tar.gz"), join(dir, "t.rego")]);
  const bundle = await readBundle(execFileSync("cat", [join(dir, "b.tar.gz")]), "trivial", ["trivial/allow"]);
  return new PolicyInstance(bundle, "trivial");
}

export async function main(): Promise<void> {
  const engine = (await loadEngine(BUNDLE)) as InProcessEngine;
  const answer = JSON.stringify([{ result: engine.decideSync(INPUT) }]);
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  const answerBytes = encoder.encode(answer);
  const trivial = await trivialInstance();

  const rates = compareSync({
    "marshalling floor (stringify+encode input, decode+parse answer)": () => {
      encoder.encode(JSON.stringify(INPUT));
      JSON.parse(decoder.decode(answerBytes));
    },
    "trivial policy through the SDK": () => {
      trivial.evaluate("trivial/allow", INPUT);
    },
    "portier engine.decideSync (validate + evaluate + check)": () => {
      engine.decideSync(INPUT);
    },
    "same, application token": () => {
      engine.decideSync(APPLICATION_INPUT);
    },
  });
  const floor = rates[0]!.perSecond;
  console.log("engine: decisions per second, in-process (median of interleaved rounds)");
  for (const r of rates) console.log(`  ${r.name.padEnd(62)} ${fmt(r.perSecond).padStart(10)}  ratio to floor ${(r.perSecond / floor).toFixed(3)}`);
  console.log(`  per decision: ${(1e6 / rates[2]!.perSecond).toFixed(1)} us; floor ${(1e6 / floor).toFixed(1)} us; trivial module ${(1e6 / rates[1]!.perSecond).toFixed(1)} us`);

  const inProcessAsync = await rateAsync(() => engine.decide(INPUT), 64, 1500);
  console.log(`engine: async decide() with 64 in flight`);
  console.log(`  in-process                 ${fmt(inProcessAsync).padStart(10)}  ratio 1.000`);
  for (const workers of [1, 2]) {
    const pool = (await loadEngine(BUNDLE, { workers })) as WorkerPoolEngine;
    await rateAsync(() => pool.decide(INPUT), 64, 300);
    const rate = await rateAsync(() => pool.decide(INPUT), 64, 1500);
    console.log(`  worker pool, ${workers} worker(s)     ${fmt(rate).padStart(10)}  ratio ${(rate / inProcessAsync).toFixed(3)}`);
    await pool.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
