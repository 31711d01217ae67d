/**
 * Every path through the decision pipeline, failures included, writes exactly one decision line and counts exactly
 * one decision; only a failure to decide (not a refusal, not a deny) marks the answer `failed`.
 */
import { describe, expect, it } from "vitest";
import { pino } from "pino";
import { Registry } from "prom-client";
import { TokenError } from "../../../src/auth/index.js";
import type { Decision, DecisionEngine, DecisionInput } from "../../../src/engine/index.js";
import { createDecide } from "../../../src/service/decide/decide.js";
import { DecisionCounts } from "../../../src/service/decision-counts.js";
import { ALLOW, fixedPolicy } from "../../support/policy-snapshot.js";
import { TENANT_A } from "../../support/sample.js";

const SUB = "11111111-1111-4111-8111-111111111111";
const CLAIMS = { sub: SUB, client_id: "web", tenant_id: TENANT_A, scope: ["apiclients"] };

interface Options {
  verify?: () => Promise<{ claims: Record<string, unknown> }>;
  decide?: (input: DecisionInput) => Decision;
}

function setup(o: Options) {
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { base: { pid: 1 } },
    { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) },
  );
  const verifier = {
    verify:
      o.verify ??
      (async () => ({ claims: { ...CLAIMS, iss: "i", exp: 0, aud: [], amr: [] }, header: {}, cached: false })),
  };
  const engine: DecisionEngine = {
    revision: "r1",
    roles: [],
    decide: o.decide ?? (() => ALLOW),
  };
  const registry = new Registry();
  const decisions = new DecisionCounts(registry);
  const decide = createDecide({
    verifier,
    policy: fixedPolicy(engine),
    directory: { lookup: () => ({ tenant_id: TENANT_A, names: ["enseignant_jeune"] }) },
    rolesClaim: undefined,
    roleCheck: "enforce",
    logger,
    metrics: { registry, decisions },
  });
  const counted = async () =>
    [...(await registry.metrics()).matchAll(/^portier_decisions_total\{.*\} (\d+)$/gm)].reduce(
      (n, m) => n + Number(m[1]),
      0,
    );
  return {
    get lines() {
      return lines.filter((l) => l.event === "decision");
    },
    all: lines,
    counted,
    ask: (token: string | null = "t") =>
      decide({ method: "GET", path: "/v1/roles", token: token ?? undefined }, "test"),
  };
}

describe("every path is recorded once: one decision line, one count", () => {
  const paths: [string, Options, string | null, string][] = [
    ["allowed", {}, "t", "allowed"],
    ["no token", {}, null, "token_missing"],
    [
      "verify refuses",
      {
        verify: async () => {
          throw new TokenError("token_expired", "expired");
        },
      },
      "t",
      "token_expired",
    ],
    [
      "verify fails otherwise",
      {
        verify: async () => {
          throw new Error("boom");
        },
      },
      "t",
      "internal_error",
    ],
    [
      "the engine throws",
      {
        decide: () => {
          throw new Error("boom");
        },
      },
      "t",
      "internal_error",
    ],
    ["the engine answers a malformed allow", { decide: () => ({ ...ALLOW, status: 403 }) }, "t", "allowed"],
  ];
  it.each(paths)("%s", async (_name, o, token, reason) => {
    const s = setup(o);
    const answer = await s.ask(token);
    expect(answer.reason).toBe(reason);
    expect(s.lines).toHaveLength(1);
    expect(s.lines[0]).toMatchObject({
      reason,
      allow: answer.allow,
      status: answer.status,
      decision_id: answer.decision_id,
    });
    expect(await s.counted()).toBe(1);
    expect(answer.failed).toBe(reason === "internal_error");
    if (reason === "internal_error") expect(s.all.filter((l) => l.event === "decision_error")).toHaveLength(1);
  });
});
