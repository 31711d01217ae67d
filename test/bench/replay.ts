/**
 * Replay benchmark: logged decisions re-evaluated per second by `portier replay` (parse the log line,
 * evaluate, compare, group) against the engine's own decision rate on the same inputs, in this process.
 * Run: npx tsx test/bench/replay.ts (needs build/bundle.tar.gz: make policies).
 */
import { pathToFileURL } from "node:url";
import { loadEngine, type DecisionInput } from "../../src/engine/index.js";
import { replayLines } from "../../src/review/index.js";
import { BUNDLE } from "../support/bundle.js";
import { fmt } from "./measure.js";

const LINES = 20_000;

function inputs(): DecisionInput[] {
  const routes = [
    "/v2/ORG001/elevesJeunes/{id}/absences",
    "/v2/ORG001/centres",
    "/v1/roles",
    "/v2/ORG002/ecoles/{id}/grillesHoraires",
    "/v3/utilisateurs/moi",
  ];
  return Array.from({ length: LINES }, (_, i) => ({
    method: "GET",
    path: (routes[i % routes.length] as string).replace("{id}", `E${i}`),
    token: {
      sub: `u${i % 997}`,
      client_id: "web",
      scope: ["openid", "apiclients"],
      auth_time: 1763880000,
      idp: "local",
      tenant_id: "3f7c1a52-8d1e-4b7a-9c3e-5a2b6d8e9f01",
    },
    roles: i % 3 === 0 ? ["enseignant_jeune"] : [],
    synced: i % 7 !== 0,
    role_check: "enforce",
  }));
}

export async function main(): Promise<void> {
  const engine = await loadEngine(BUNDLE);
  const all = inputs();
  const lines = all.map((input) => {
    const d = engine.decide(input);
    return JSON.stringify({
      level: 30,
      time: Date.now(),
      pid: 1,
      event: "decision",
      decision_id: "x",
      adapter: "decide",
      method: "GET",
      path: input.path,
      route: d.route?.template ?? null,
      allow: d.allow,
      reason: d.reason,
      revision: engine.revision,
      input,
      msg: "decision",
    });
  });
  const engineRates: number[] = [];
  const replayRates: number[] = [];
  for (let round = 0; round < 5; round++) {
    let t = performance.now();
    for (const input of all) engine.decide(input);
    engineRates.push((all.length * 1000) / (performance.now() - t));
    t = performance.now();
    const r = await replayLines(lines, engine);
    replayRates.push((r.replayed * 1000) / (performance.now() - t));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  const e = median(engineRates);
  const r = median(replayRates);
  console.log(`replay: ${LINES} logged decisions, median of 5 interleaved rounds`);
  console.log(`  engine.decide on the same inputs       ${fmt(e).padStart(10)}  ratio 1.000`);
  console.log(`  portier replay (parse, evaluate, group) ${fmt(r).padStart(10)}  ratio ${(r / e).toFixed(3)}`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
