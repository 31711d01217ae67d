/**
 * Decision memo benchmark: engine.decide with the memo (the service's default size) against the same
 * engine without it, in the same run, on generated traffic of a realistic shape: users and route templates
 * drawn from Zipf distributions, each path parameter filled from K distinct ids (K = 1, 10) or with an id
 * never seen before. Reports the hit rate the timed rounds saw and the ratio of decisions per second to the
 * mean of two engines without memo, measured in the same rounds (order rotating each round); the ratio of
 * those two ("A/A") shows how far noise and instance placement alone move a ratio.
 * Rates are per second of the process's CPU time (GC included), which waiting for a shared core does not move.
 * Run: npx tsx test/bench/memo.ts (needs build/bundle.tar.gz: make policies).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { loadEngine, DecisionMemo, type DecisionInput, type InProcessEngine } from "../../src/engine/index.js";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { BUNDLE } from "../support/bundle.js";
import { compareSync, fmt } from "./measure.js";
import { seededRandom as random } from "../support/random.js";

const USERS = Number(process.env.BENCH_MEMO_USERS ?? 2000);
const REQUESTS = Number(process.env.BENCH_MEMO_REQUESTS ?? 40_000);
/** The service's default --decision-memo-entries. */
const MEMO_ENTRIES = 10_000;
const TENANTS = ["3f7c1a52-8d1e-4b7a-9c3e-5a2b6d8e9f01", "9d2e4f61-0a3b-4c5d-8e7f-1a2b3c4d5e6f"];

interface Route {
  template: string;
  allowed: string[] | "all_synced";
}
const ROUTES = (JSON.parse(readFileSync(join(PROJECT_ROOT, "data", "routes.json"), "utf8")) as { routes: Route[] })
  .routes;
const ROLES = (
  JSON.parse(readFileSync(join(PROJECT_ROOT, "data", "roles.json"), "utf8")) as { roles: { id: string }[] }
).roles.map((r) => r.id);

/** Draws ranks 0..n-1 with probability proportional to 1 / (rank + 1)^s. */
function zipf(n: number, s: number, rnd: () => number): () => number {
  const cumulative: number[] = [];
  let sum = 0;
  for (let k = 1; k <= n; k++) cumulative.push((sum += 1 / k ** s));
  return () => {
    const x = rnd() * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cumulative[mid] as number) < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** K: ids per parameter; "never": each request names a new id. */
type IdSpace = number | "never";

export function traffic(ids: IdSpace, seed = 42): DecisionInput[] {
  const rnd = random(seed);
  const user = zipf(USERS, 1.1, rnd);
  const route = zipf(ROUTES.length, 1.1, rnd);
  // Each user has one token (its claims do not change between its requests) and a role.
  const users = Array.from({ length: USERS }, (_, i) => ({
    token: {
      sub: `user-${i}`,
      client_id: "portier-demo-web",
      scope: ["openid", "apiclients"],
      auth_time: 1763880000 + i,
      idp: "local",
      tenant_id: TENANTS[i % 2] as string,
    },
    roles: [ROLES[i % ROLES.length] as string],
    synced: i % 10 !== 0,
  }));
  let fresh = 0;
  return Array.from({ length: REQUESTS }, (): DecisionInput => {
    const u = users[user()]!;
    const path = ROUTES[route()]!.template.replace(/\{[^}]+\}/g, (name) =>
      ids === "never" ? `id${fresh++}` : `${name.slice(1, 4)}${Math.floor(rnd() * ids)}`,
    );
    return { method: "GET", path, token: u.token, roles: u.roles, synced: u.synced, role_check: "enforce" };
  });
}

/** A decide over the traffic, one input after the other, wrapping around. */
export function replayer(engine: InProcessEngine, inputs: DecisionInput[]): () => void {
  let i = 0;
  return () => {
    engine.decide(inputs[i]!);
    i = i + 1 === inputs.length ? 0 : i + 1;
  };
}

/** Decisions per second without memo, with it, and without it again (a second engine: the noise floor). */
async function measure(
  inputs: DecisionInput[],
): Promise<{ off: number; on: number; control: number; hitRate: number }> {
  // Each engine is its own wasm instance; the two without memo bracket what instance and order alone do.
  const plain = await loadEngine(BUNDLE);
  const again = await loadEngine(BUNDLE);
  const counts = { hits: 0, misses: 0 };
  const memoised = await loadEngine(BUNDLE, { memo: { entries: MEMO_ENTRIES, counts } });
  const [off, on, control] = compareSync(
    { off: replayer(plain, inputs), on: replayer(memoised, inputs), control: replayer(again, inputs) },
    { rounds: 12, ms: 250, clock: "cpu", rotate: true },
  );
  return {
    off: (off!.perSecond + control!.perSecond) / 2,
    on: on!.perSecond,
    control: control!.perSecond / off!.perSecond,
    hitRate: counts.hits / (counts.hits + counts.misses),
  };
}

export async function main(): Promise<void> {
  console.log(
    `memo: engine.decide with a ${MEMO_ENTRIES}-entry memo vs without, ${USERS} users (Zipf ` +
      `1.1), ${ROUTES.length} route templates (Zipf 1.1), ${REQUESTS} requests replayed in order`,
  );
  const scenarios: [string, DecisionInput[]][] = [
    ["K = 1 id per parameter", traffic(1)],
    ["K = 10 ids per parameter", traffic(10)],
    ["ids never repeating", traffic("never")],
    // The same input every time: the memo's ceiling.
    ["one input repeated", traffic(1).slice(0, 1)],
  ];
  await missPathShare();
  for (const [name, inputs] of scenarios) {
    const distinct = new Set(inputs.map((i) => JSON.stringify(i))).size;
    const m = await measure(inputs);
    console.log(
      `  ${name.padEnd(26)} distinct ${String(distinct).padStart(6)}  hit ` +
        `rate ${(100 * m.hitRate).toFixed(1).padStart(5)}%  no memo ${fmt(m.off).padStart(9)}  ` +
        `memo ${fmt(m.on).padStart(9)}  ratio ${(m.on / m.off).toFixed(3)}  (A/A ${m.control.toFixed(3)})`,
    );
  }
}

/**
 * The miss path's own work, apart from evaluation: what the memo adds per decision when nothing repeats
 * (lookup of a new key, the doorkeeper remembering it), over the same stringify, in tight loops; set
 * against one decision without memo, measured in the same rounds.
 */
async function missPathShare(): Promise<void> {
  const inputs = traffic("never");
  const plain = await loadEngine(BUNDLE);
  const memo = new DecisionMemo({ entries: MEMO_ENTRIES });
  const decision = plain.decide(inputs[0]!);
  let i = 0;
  let j = 0;
  const rates = compareSync(
    {
      stringify: () => {
        JSON.stringify(inputs[i]);
        i = i + 1 === inputs.length ? 0 : i + 1;
      },
      "stringify + memo miss": () => {
        const key = JSON.stringify(inputs[j]);
        if (memo.get(key) === undefined) memo.set(key, decision);
        j = j + 1 === inputs.length ? 0 : j + 1;
      },
      decide: replayer(plain, inputs),
    },
    { rounds: 12, ms: 200, clock: "cpu", rotate: true },
  );
  const [bare, withMemo, decide] = rates.map((r) => 1e6 / r.perSecond) as [number, number, number];
  console.log(
    `  miss path alone (never ` +
      `repeating): ${(withMemo - bare).toFixed(2)} us per ` +
      `decision, ${((100 * (withMemo - bare)) / decide).toFixed(1)}% of a decision without memo ` +
      `(${decide.toFixed(1)} us CPU)`,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
