/**
 * The decision pipeline without promises: a token the verifier has cached (verifyCached) and the engine
 * (which answers in the calling thread) give the answer directly, the same answer and the same log line as
 * the asynchronous path; a cache miss gives a promise. Every path, failures included, writes exactly one
 * decision line and counts exactly one decision.
 */
import { describe, expect, it } from "vitest";
import { pino } from "pino";
import { Registry } from "prom-client";
import { TokenError, type AccessTokenVerifier } from "../../../src/auth/index.js";
import type { Decision, DecisionEngine, DecisionInput } from "../../../src/engine/index.js";
import { createDecide, whenAnswered, type DecisionAnswer } from "../../../src/service/decide/decide.js";
import { DecisionCounts } from "../../../src/service/decision-counts.js";
import { ALLOW, fixedPolicy } from "../../support/policy-snapshot.js";
import { TENANT_A } from "../../support/sample.js";

const SUB = "11111111-1111-4111-8111-111111111111";
const CLAIMS = { sub: SUB, client_id: "web", tenant_id: TENANT_A, scope: ["apiclients"] };

interface Options {
  cached: boolean;
  verify?: () => Promise<unknown>;
  decide?: (input: DecisionInput) => Decision;
}

function setup(o: Options) {
  const lines: Record<string, unknown>[] = [];
  const logger = pino(
    { base: { pid: 1 } },
    { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) },
  );
  const verifier = {
    verify: o.verify ?? (async () => ({ claims: CLAIMS, header: {}, cached: false })),
    ...(o.cached
      ? { verifyCached: () => ({ claims: CLAIMS, header: {}, cached: true }) }
      : { verifyCached: () => undefined }),
  } as unknown as AccessTokenVerifier;
  const engine: DecisionEngine = {
    revision: "r1",
    roles: [],
    decide: o.decide ?? (() => ALLOW),
    close: () => undefined,
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

const stable = (x: Record<string, unknown>) => ({ ...x, decision_id: "-", time: 0, latency_ms: 0 });

describe("a cached token and the engine answer without a promise", () => {
  it("the answer is a value, the same as the asynchronous path's, with the same log line", async () => {
    const sync = setup({ cached: true });
    const now = sync.ask();
    expect(now).not.toBeInstanceOf(Promise);
    const async = setup({ cached: false });
    const later = async.ask();
    expect(later).toBeInstanceOf(Promise);
    expect(stable({ ...(await later) })).toEqual(stable({ ...(await now) }));
    expect((await now).allow).toBe(true);
    expect(sync.lines.map(stable)).toEqual(async.lines.map(stable));
  });

  it("a token not in the cache: a promise", () => {
    expect(setup({ cached: false }).ask()).toBeInstanceOf(Promise);
  });
});

describe("every path is recorded once: one decision line, one count", () => {
  const paths: [string, Options, string | null, string][] = [
    ["allowed, all synchronous", { cached: true }, "t", "allowed"],
    ["no token", { cached: true }, null, "token_missing"],
    [
      "verify refuses",
      {
        cached: false,
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
        cached: false,
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
        cached: true,
        decide: () => {
          throw new Error("boom");
        },
      },
      "t",
      "internal_error",
    ],
    [
      "the engine throws after a token check that awaited",
      {
        cached: false,
        decide: () => {
          throw new Error("boom");
        },
      },
      "t",
      "internal_error",
    ],
    [
      "the engine answers a malformed allow",
      { cached: true, decide: () => ({ ...ALLOW, status: 403 }) },
      "t",
      "allowed",
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
    if (reason === "internal_error") expect(s.all.filter((l) => l.event === "decision_error")).toHaveLength(1);
  });
});

describe("whenAnswered: the adapters' one junction, sending now or later", () => {
  const sent: [string, DecisionAnswer][] = [];
  const send = (to: string, a: DecisionAnswer) => void sent.push([to, a]);

  it("an answer made at once is sent in the same call, with no promise", async () => {
    sent.length = 0;
    const answer = await setup({ cached: true }).ask();
    expect(whenAnswered(answer, send, "res")).toBeUndefined();
    expect(sent).toEqual([["res", answer]]);
  });

  it("a pending answer is sent when it settles; the promise it returns settles after the send", async () => {
    sent.length = 0;
    const pending = setup({ cached: false }).ask();
    const work = whenAnswered(pending, send, "res");
    expect(work).toBeInstanceOf(Promise);
    expect(sent).toHaveLength(0);
    await work;
    expect(sent).toEqual([["res", await pending]]);
  });

  it("a send that throws rejects the returned promise (the adapter answers its failure)", async () => {
    const boom = () => {
      throw new Error("socket gone");
    };
    await expect(whenAnswered(setup({ cached: false }).ask(), boom, "res")).rejects.toThrow("socket gone");
    expect(() => whenAnswered(setup({ cached: true }).ask(), boom, "res")).toThrow("socket gone");
  });
});
