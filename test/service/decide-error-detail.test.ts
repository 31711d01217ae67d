/**
 * The public text / internal detail split on the decision path: whatever the wasm or an engine throws is
 * written to the log and never reaches the answer (the caller sees a fixed message for its reason).
 * createDecide in process, with the real compiled bundle whose wasm is made to throw, and a fake engine.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { pino } from "pino";
import type { AccessTokenVerifier } from "../../src/auth/index.js";
import { loadEngine, InProcessEngine, POLICY_ERROR_MESSAGE, type DecisionEngine } from "../../src/engine/index.js";
import { createDecide } from "../../src/service/decide.js";
import { requireBundle } from "../support/bundle.js";
import { fixedPolicy } from "../support/policy-snapshot.js";
import { TENANT_A } from "../support/sample.js";

const SECRET = "wasm-internal-3f9a: memory at 0x1f00";
const TEACHER = "11111111-1111-4111-8111-111111111111";
const CLAIMS = { sub: TEACHER, client_id: "web", tenant_id: TENANT_A, scope: "openid apiclients", auth_time: 1, idp: "local" };

let real: InProcessEngine;
beforeAll(async () => {
  real = (await loadEngine(requireBundle())) as InProcessEngine;
});

interface WasmInternals {
  opaEval: (...args: number[]) => number;
  view: Buffer;
}

/** Makes the real engine's wasm `opa_eval` do `evaluate` (throw, or answer some text) until restored. */
function breakWasm(engine: InProcessEngine, evaluate: () => string): () => void {
  const instance = (engine as unknown as { instance: WasmInternals }).instance;
  const original = instance.opaEval;
  const broken = (...args: number[]): number => {
    const text = evaluate();
    const at = (args[5] ?? 0) + 64;
    instance.view.write(`${text}\0`, at);
    return at;
  };
  instance.opaEval = broken;
  // A trap makes the engine build a new instance (with its own opa_eval): then there is nothing to restore.
  return () => {
    if (instance.opaEval === broken) instance.opaEval = original;
  };
}

async function decideWith(engine: DecisionEngine) {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  const verifier = { verify: async (token: string) => ({ claims: JSON.parse(token) as Record<string, unknown>, header: {}, cached: false }) } as unknown as AccessTokenVerifier;
  const decide = createDecide({ verifier, policy: fixedPolicy(engine), directory: { lookup: (sub) => (sub === TEACHER ? { tenant_id: TENANT_A, names: ["enseignant_jeune"] } : undefined) }, rolesClaim: undefined, roleCheck: "enforce", logger, metrics: undefined });
  const answer = await decide({ method: "GET", path: "/v1/roles", token: JSON.stringify(CLAIMS) }, "test");
  return { answer, log: lines.map((l) => JSON.stringify(l)).join("\n") };
}

describe("an error's internal text reaches the log, never the answer", () => {
  const cases: [string, () => DecisionEngine, string, string, string][] = [
    [
      "the wasm throws (a trap)",
      () => {
        const restore = breakWasm(real, () => {
          throw Object.assign(new Error(SECRET), { name: "RuntimeError" });
        });
        return { ...real, roles: real.roles, revision: real.revision, decide: (i) => real.decide(i).finally(restore), close: async () => undefined };
      },
      "policy_error",
      POLICY_ERROR_MESSAGE,
      `"detail":"policy evaluation failed: RuntimeError: ${SECRET}"`,
    ],
    [
      "the wasm answers no decision",
      () => {
        const restore = breakWasm(real, () => JSON.stringify([{ result: { allow: SECRET } }]));
        return { ...real, roles: real.roles, revision: real.revision, decide: (i) => real.decide(i).finally(restore), close: async () => undefined };
      },
      "policy_error",
      POLICY_ERROR_MESSAGE,
      `"detail":"decision.allow is not a boolean"`,
    ],
    [
      "the engine itself throws",
      () => ({ revision: "test", roles: [], decide: () => Promise.reject(new Error(SECRET)), close: async () => undefined }),
      "internal_error",
      "the decision could not be made",
      `"error":"${SECRET}"`,
    ],
  ];

  it.each(cases)("%s: a fixed public message, the detail only in the log", async (_name, engine, reason, message, logged) => {
    const { answer, log } = await decideWith(engine());
    expect(answer).toMatchObject({ allow: false, status: 403, reason, message });
    expect(answer).not.toHaveProperty("detail");
    expect(JSON.stringify(answer)).not.toContain("wasm-internal");
    expect(log).toContain(logged);
  });

  it("the broken wasm was the real engine's: restored, it answers normally again", async () => {
    expect((await decideWith(real)).answer).toMatchObject({ allow: true, reason: "allowed" });
  });
});
