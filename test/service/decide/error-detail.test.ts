/**
 * The public text / internal detail split on the decision path: whatever the wasm or an engine throws is
 * written to the log and never reaches the answer (the caller sees a fixed message for its reason).
 * createDecide in process, with the real compiled bundle whose policy evaluation is made to throw, and a fake engine.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { pino } from "pino";
import { loadEngine, InProcessEngine, POLICY_ERROR_MESSAGE, type DecisionEngine } from "../../../src/engine/index.js";
import { createDecide } from "../../../src/service/decide/decide.js";
import { requireBundle } from "../../support/bundle.js";
import { fixedPolicy } from "../../support/policy-snapshot.js";
import { controlledEngine, type ControlledEngine, type EvaluateOverride } from "../../support/engine.js";
import { TENANT_A } from "../../support/sample.js";

const SECRET = "wasm-internal-3f9a: memory at 0x1f00";
const TEACHER = "11111111-1111-4111-8111-111111111111";
const CLAIMS = {
  sub: TEACHER,
  client_id: "web",
  tenant_id: TENANT_A,
  scope: "openid apiclients",
  auth_time: 1,
  idp: "local",
};

let real: InProcessEngine;
let controlled: ControlledEngine;
beforeAll(async () => {
  real = await loadEngine(requireBundle());
  controlled = await controlledEngine();
});

/** The real engine, its policy's evaluate() made to throw or answer `result` for one decision, then restored. */
function breakWasm(evaluate: EvaluateOverride): DecisionEngine {
  const { engine } = controlled;
  return {
    roles: engine.roles,
    revision: engine.revision,
    decide: (i) => {
      const restore = controlled.override(evaluate);
      try {
        return engine.decide(i);
      } finally {
        restore();
      }
    },
  };
}

async function decideWith(engine: DecisionEngine) {
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: "info" },
    { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  const verifier = {
    verify: async (token: string) => ({
      claims: JSON.parse(token) as Record<string, unknown>,
      header: {},
      cached: false,
    }),
  };
  const decide = createDecide({
    verifier,
    policy: fixedPolicy(engine),
    directory: {
      lookup: (sub) => (sub === TEACHER ? { tenant_id: TENANT_A, names: ["enseignant_jeune"] } : undefined),
    },
    rolesClaim: undefined,
    roleCheck: "enforce",
    logger,
    metrics: undefined,
  });
  const answer = await decide({ method: "GET", path: "/v1/roles", token: JSON.stringify(CLAIMS) }, "test");
  return { answer, log: lines.map((l) => JSON.stringify(l)).join("\n") };
}

describe("an error's internal text reaches the log, never the answer", () => {
  const cases: [string, () => DecisionEngine, string, string, string][] = [
    [
      "the wasm throws (a trap)",
      () =>
        breakWasm(() => {
          throw Object.assign(new Error(SECRET), { name: "RuntimeError" });
        }),
      "policy_error",
      POLICY_ERROR_MESSAGE,
      `"detail":"policy evaluation failed: RuntimeError: ${SECRET}"`,
    ],
    [
      "the wasm answers no decision",
      () => breakWasm(() => [{ result: { allow: SECRET } }]),
      "policy_error",
      POLICY_ERROR_MESSAGE,
      `"detail":"decision.allow is not a boolean"`,
    ],
    [
      "the engine itself throws",
      () => ({
        revision: "test",
        roles: [],
        decide: () => {
          throw new Error(SECRET);
        },
      }),
      "internal_error",
      "the decision could not be made",
      `"error":"${SECRET}"`,
    ],
  ];

  it.each(cases)(
    "%s: a fixed public message, the detail only in the log",
    async (_name, engine, reason, message, logged) => {
      const { answer, log } = await decideWith(engine());
      expect(answer).toMatchObject({ allow: false, status: 403, reason, message });
      expect(answer).not.toHaveProperty("detail");
      expect(JSON.stringify(answer)).not.toContain("wasm-internal");
      expect(log).toContain(logged);
    },
  );

  it("the broken wasm was the real engine's: restored, it answers normally again", async () => {
    expect((await decideWith(controlled.engine)).answer).toMatchObject({ allow: true, reason: "allowed" });
    expect((await decideWith(real)).answer).toMatchObject({ allow: true, reason: "allowed" });
  });
});
