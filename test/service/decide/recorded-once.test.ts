/**
 * Every path through the decision pipeline, failures included, writes exactly one decision line and counts exactly
 * one decision; only a failure to decide (not a refusal, not a deny) marks the answer `failed`, and the typed
 * `failure` says whose (Portier's, or a policy that could not evaluate). An answer given before any decision
 * (decide.reject) is one line too, under the decision id it returns, counted apart as a rejection.
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
  const counted = async (name = "portier_decisions_total") =>
    [...(await registry.metrics()).matchAll(new RegExp(`^${name}\\{.*\\} (\\d+)$`, "gm"))].reduce(
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
    decide,
    registry,
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
    [
      "the policy cannot evaluate",
      { decide: () => ({ ...ALLOW, allow: false, status: 403, reason: "policy_error", message: "trap" }) },
      "t",
      "policy_error",
    ],
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
    const failure = { internal_error: "internal", policy_error: "policy" }[reason];
    expect(answer.failure).toBe(failure);
    if (reason === "internal_error") expect(s.all.filter((l) => l.event === "decision_error")).toHaveLength(1);
  });
});

describe("an answer given before any decision", () => {
  it(
    "is one line under the decision id reject() returns, " + "with the request as received, counted as a rejection",
    async () => {
      const s = setup({});
      const id = s.decide.reject!({
        adapter: "forward-auth/nginx",
        req: { method: "GET", path: "/v2/ORG001/centres", trace: { clientAddress: "10.0.0.9" } },
        status: 403,
        reason: "request_invalid",
        message: "several X-Original-URI headers: exactly one is expected",
      });
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect(s.lines).toHaveLength(1);
      expect(s.lines[0]).toMatchObject({
        decision_id: id,
        adapter: "forward-auth/nginx",
        method: "GET",
        path: "/v2/ORG001/centres",
        client_address: "10.0.0.9",
        allow: false,
        status: 403,
        reason: "request_invalid",
        input: null,
        revision: "r1",
      });
      expect(await s.counted()).toBe(0);
      expect(await s.registry.metrics()).toContain(
        'portier_requests_rejected_total{adapter="forward-auth/nginx",reason="request_invalid"} 1',
      );
    },
  );
});
