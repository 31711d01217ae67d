/**
 * Engine benchmark: decisions per second against the SDK's own marshalling floor (JSON.stringify + encode
 * of the same input, decode + JSON.parse of the same answer), all measured in this process: a trivial
 * compiled policy and portier/decision through the SDK's evaluate() given the input object, the same through
 * PolicyInstance (the SDK's evaluate() given the input's JSON bytes, as the engine does), and engine.decide.
 * Run: npx tsx test/bench/engine.ts (needs build/bundle.tar.gz: make policies).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createRequire } from "node:module";
import { loadEngine, DECISION_ENTRYPOINT, type DecisionInput } from "../../src/engine/index.js";
import { opaPath } from "../../src/toolchain/opa.js";
import { PolicyInstance } from "../../src/engine/policy-instance.js";
import { readBundle, type Bundle } from "../../src/engine/read-bundle.js";
import { BUNDLE } from "../support/bundle.js";
import { compareSync, fmt } from "./measure.js";

const INPUT: DecisionInput = {
  method: "GET",
  path: "/v2/ORG001/elevesJeunes/42/absences",
  token: {
    sub: "0b8a3f2e-1c4d-4e5f-8a9b-0c1d2e3f4a5b",
    client_id: "portier-demo-web",
    scope: ["openid", "email", "profile", "apiclients"],
    auth_time: 1763880000,
    idp: "local",
    tenant_id: "3f7c1a52-8d1e-4b7a-9c3e-5a2b6d8e9f01",
  },
  roles: ["enseignant_jeune"],
  synced: true,
  role_check: "enforce",
};

/** The same call by an application (client-credentials) token: no role check, no role message. */
const APPLICATION_INPUT: DecisionInput = {
  ...INPUT,
  token: {
    client_id: "m1",
    aud: ["apiclients"],
    scope: ["apiclients"],
    tenant_id: "3f7c1a52-8d1e-4b7a-9c3e-5a2b6d8e9f01",
  },
  roles: [],
  synced: false,
};

const sdk = createRequire(import.meta.url)(
  "@open-policy-agent/opa-wasm",
) as typeof import("@open-policy-agent/opa-wasm");

/** A module loaded by the unmodified SDK, evaluated with its own evaluate(). */
function sdkPolicy(bundle: Bundle): ReturnType<typeof sdk.loadPolicySync> {
  const policy = sdk.loadPolicySync(new WebAssembly.Module(bundle.wasm));
  policy.setData(bundle.data);
  return policy;
}

async function trivialBundle(): Promise<Bundle> {
  const dir = mkdtempSync(join(tmpdir(), "portier-trivial-"));
  writeFileSync(join(dir, "t.rego"), "package trivial\n\nallow := true\n");
  execFileSync(opaPath(), [
    "build",
    "-t",
    "wasm",
    "-e",
    "trivial/allow",
    "-o",
    join(dir, "b.tar.gz"),
    join(dir, "t.rego"),
  ]);
  return readBundle(readFileSync(join(dir, "b.tar.gz")), "trivial", ["trivial/allow"]);
}

export async function main(): Promise<void> {
  const engine = await loadEngine(BUNDLE);
  const answer = JSON.stringify([{ result: engine.decide(INPUT) }]);
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  const answerBytes = encoder.encode(answer);
  const trivial = await trivialBundle();
  const trivialSdk = sdkPolicy(trivial);
  const trivialDirect = new PolicyInstance(trivial, "trivial");
  const bundle = await readBundle(readFileSync(BUNDLE), BUNDLE, [DECISION_ENTRYPOINT]);
  const viaSdk = sdkPolicy(bundle);
  const direct = new PolicyInstance(bundle, BUNDLE);
  const decisionId = direct.entrypointId(DECISION_ENTRYPOINT)!;

  const rates = compareSync(
    {
      "marshalling floor (stringify+encode input, decode+parse answer)": () => {
        encoder.encode(JSON.stringify(INPUT));
        JSON.parse(decoder.decode(answerBytes));
      },
      "trivial policy, SDK evaluate()": () => {
        trivialSdk.evaluate(INPUT, "trivial/allow");
      },
      "trivial policy, PolicyInstance (SDK evaluate() on JSON bytes)": () => {
        trivialDirect.evaluateJson(trivialDirect.entrypointId("trivial/allow")!, JSON.stringify(INPUT));
      },
      "portier/decision, SDK evaluate() on the object": () => {
        viaSdk.evaluate(INPUT, DECISION_ENTRYPOINT);
      },
      "portier/decision, PolicyInstance (SDK evaluate() on JSON bytes)": () => {
        direct.evaluateJson(decisionId, JSON.stringify(INPUT));
      },
      "engine.decide, no memo (validate + evaluate + check)": () => {
        engine.decide(INPUT);
      },
      "engine.decide, no memo, application token": () => {
        engine.decide(APPLICATION_INPUT);
      },
    },
    { rounds: 9, ms: 250, clock: "cpu", rotate: true },
  );
  const floor = rates[0]!.perSecond;
  console.log(
    "engine: evaluations per second of CPU time, in-process (median of interleaved rounds), ratio = floor's time / " +
      "its time",
  );
  for (const r of rates)
    console.log(
      `  ${r.name.padEnd(62)} ${fmt(r.perSecond).padStart(10)}  ratio to ` +
        `floor ${(r.perSecond / floor).toFixed(3)}  ${(1e6 / r.perSecond).toFixed(1)} us`,
    );
  console.log(
    `  PolicyInstance vs SDK evaluate() on the object: ` +
      `trivial ${(rates[2]!.perSecond / rates[1]!.perSecond).toFixed(2)}x, ` +
      `portier/decision ${(rates[4]!.perSecond / rates[3]!.perSecond).toFixed(2)}x`,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
