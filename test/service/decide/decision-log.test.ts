/**
 * The decision log line: one JSON line per decision with the service's logger options (base pid, redaction)
 * and a fixed clock, its fields in order and each value as given (undefined and function values left out);
 * the logger's own options (a child's bindings, mixin, formatters, serializers, redaction) apply to it; a
 * level above info writes nothing.
 */
import { describe, expect, it } from "vitest";
import { pino, type LoggerOptions } from "pino";
import { createDecisionLog, type DecisionLogFields } from "../../../src/service/decide/decision-log.js";

const SERVICE_OPTIONS: LoggerOptions = {
  base: { pid: 4242 },
  redact: { paths: ["token", "authorization", "headers.authorization", "req.headers.authorization"], remove: true },
  timestamp: () => ',"time":1700000000000',
};

function capture(options: LoggerOptions) {
  const lines: string[] = [];
  const logger = pino(options, { write: (l: string) => void lines.push(l) });
  return { logger, lines };
}

const BASE: DecisionLogFields = {
  event: "decision",
  decision_id: "00000000-0000-4000-8000-000000000000",
  adapter: "forward-auth/nginx",
  method: "GET",
  path: "/v2/ORG001/elevesJeunes/42",
  raw_path: undefined,
  route: "/v2/{codeOrganisme}/elevesJeunes/{id}",
  flow: "accessCode",
  client_id: "web",
  sub: "11111111-1111-4111-8111-111111111111",
  tenant_id: "3f7c1a52-8d1e-4b7a-9c3e-5a2b6d8e9f01",
  roles: ["enseignant_jeune"],
  allow: true,
  status: 200,
  reason: "allowed",
  message: "allowed",
  request_id: null,
  traceparent: null,
  client_address: "127.0.0.1",
  would_deny: null,
  revision: "rev-1",
  input: {
    method: "GET",
    path: "/v2/ORG001/elevesJeunes/42",
    token: { sub: "s", scope: ["apiclients"] },
    roles: ["enseignant_jeune"],
    synced: true,
    role_check: "enforce",
  },
  latency_ms: 0.123,
};

const CASES: [string, Partial<DecisionLogFields>][] = [
  ["an allow", {}],
  ["an invalid path kept raw (path null)", { path: null, raw_path: "/v1/%2e%2e/" + "x".repeat(500), input: null }],
  [
    "quotes, backslashes and control characters",
    { message: 'say "no" \\ then\nnewline\ttab', sub: 'a"b', client_id: "c\\d" },
  ],
  ["a lone surrogate in a short and in a long string", { sub: "x\ud800y", message: "\udc00".repeat(150) }],
  ["non-ASCII and U+2028", { tenant_id: "Élève\u2028adulte", roles: ["é", "\u0000"] }],
  ["a string of exactly 100 and 101 characters", { client_id: "a".repeat(100), sub: "b".repeat(101) }],
  ["undefined flow and message are left out", { flow: undefined, message: undefined }],
  [
    "non-finite and odd values",
    { latency_ms: Number.NaN, status: Number.POSITIVE_INFINITY, reason: 42, allow: false, route: { template: "/x" } },
  ],
  ["a function value is left out", { would_deny: () => 1 }],
  ["a token-like top-level name in the input is not special", { input: { token: { sub: "s" }, authorization: "x" } }],
];

/** What JSON makes of a value: undefined and functions left out, non-finite numbers null. */
const asJson = (v: unknown): unknown =>
  typeof v === "function" ? undefined : (JSON.parse(JSON.stringify({ v })) as { v?: unknown }).v;

describe("the decision line", () => {
  it.each(CASES)("%s", (_name, change) => {
    const fields = { ...BASE, ...change } as DecisionLogFields;
    const built = capture(SERVICE_OPTIONS);
    createDecisionLog(built.logger)(fields);
    expect(built.lines).toHaveLength(1);
    expect(built.lines[0]!.endsWith("\n")).toBe(true);
    const line = JSON.parse(built.lines[0]!) as Record<string, unknown>;
    const kept = Object.entries(fields).filter(([, v]) => asJson(v) !== undefined);
    expect(Object.keys(line)).toEqual(["level", "time", "pid", ...kept.map(([k]) => k), "msg"]);
    expect(line).toEqual({
      level: 30,
      time: 1700000000000,
      pid: 4242,
      ...Object.fromEntries(kept.map(([k, v]) => [k, asJson(v)])),
      msg: "decision",
    });
  });

  it("takes the logger's bindings of a child logger", () => {
    const built = capture(SERVICE_OPTIONS);
    createDecisionLog(built.logger.child({ worker: 2 }))(BASE);
    expect(JSON.parse(built.lines[0]!)).toMatchObject({
      pid: 4242,
      worker: 2,
      decision_id: BASE.decision_id,
      msg: "decision",
    });
  });
});

describe("the logger's own options apply to the decision line", () => {
  const others: [string, LoggerOptions][] = [
    ["a mixin", { ...SERVICE_OPTIONS, mixin: () => ({ extra: 1 }) }],
    ["a log formatter", { ...SERVICE_OPTIONS, formatters: { log: (o) => ({ ...o, formatted: true }) } }],
    ["a serializer of a decision field", { ...SERVICE_OPTIONS, serializers: { sub: () => "hidden" } }],
    ["redaction of a decision field", { ...SERVICE_OPTIONS, redact: ["sub", "input.token"] }],
    ["a nested key", { ...SERVICE_OPTIONS, nestedKey: "payload" }],
    ["a message key", { ...SERVICE_OPTIONS, messageKey: "message_text" }],
    ["a message prefix", { ...SERVICE_OPTIONS, msgPrefix: "[portier] " }],
  ];
  it.each(others)("%s", (_name, options) => {
    const oracle = capture(options);
    oracle.logger.info(BASE, "decision");
    const built = capture(options);
    createDecisionLog(built.logger)(BASE);
    expect(built.lines[0]).toBe(oracle.lines[0]);
  });
});

describe("levels", () => {
  it.each(["warn", "silent"])("level %s: no line", (level) => {
    const built = capture({ ...SERVICE_OPTIONS, level });
    createDecisionLog(built.logger)(BASE);
    expect(built.lines).toEqual([]);
  });

  it("a level lowered after creation is followed", () => {
    const built = capture({ ...SERVICE_OPTIONS, level: "warn" });
    const log = createDecisionLog(built.logger);
    built.logger.level = "info";
    log(BASE);
    expect(built.lines).toHaveLength(1);
  });
});
