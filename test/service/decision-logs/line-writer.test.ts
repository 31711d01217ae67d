/**
 * The decision line written in one step (line-writer.ts) is byte for byte the line pino writes for the same record
 * (decisionLine through logger.info), whatever it holds (escapes, nulls, absent fields, a NaN, a shadow), with the
 * input written from the engine's text only for the very object it encoded (a masked copy is encoded again); a
 * logger whose lines are not plain gets no writer, a redacted or serialised field is left to pino, and a level that
 * leaves info out writes nothing.
 */
import { describe, expect, it } from "vitest";
import { pino, type Logger } from "pino";
import { decisionLineWriter } from "../../../src/service/decision-logs/line-writer.js";
import { decisionLine } from "../../../src/service/decision-logs/line.js";
import type { DecisionRecord } from "../../../src/service/decide/record.js";
import type { DecisionInput } from "../../../src/engine/types.js";

function capture(options: pino.LoggerOptions = {}): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const stream = { write: (s: string) => void lines.push(s) };
  const logger = pino(
    {
      base: { pid: 42 },
      timestamp: () => ',"time":1700000000000',
      redact: { paths: ["token", "authorization", "headers.authorization"], remove: true },
      ...options,
    },
    stream,
  );
  return { logger, lines };
}

const input: DecisionInput = {
  method: "POST",
  path: "/todos",
  token: { sub: 'é"\\\n\u0001' },
  roles: ["editor"],
  synced: true,
  role_check: "enforce",
};

function record(over: Partial<DecisionRecord> = {}): DecisionRecord {
  return {
    decision_id: "d-1",
    time: 1,
    request: {
      adapter: "authzen_evaluations",
      method: "POST",
      path: "/todos",
      raw_path: undefined,
      client_address: "127.0.0.1",
      request_id: null,
      traceparent: null,
    },
    input,
    encoded_input: { of: input, json: JSON.stringify(input) },
    result: {
      allow: true,
      status: 200,
      reason: "allowed",
      message: "user role editor is allowed on /todos, a message longer than forty-two characters",
      flow: "accessCode",
      route: "/todos",
      client_id: null,
      sub: "u1",
      tenant_id: "t",
      roles: ["editor"],
      would_deny: null,
    },
    revision: "abc",
    trace_id: undefined,
    span_id: undefined,
    detail: undefined,
    latency_ms: 0.042,
    ...over,
  };
}

const RECORDS: [string, DecisionRecord][] = [
  ["an allow", record()],
  [
    "escapes, a null input, a NaN latency, a shadow",
    record({
      decision_id: "d-2\u2028",
      request: {
        adapter: "decide",
        method: "GET",
        path: null,
        raw_path: '/a"b\\c\td\u0000',
        client_address: null,
        request_id: "r-1",
        traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
      },
      input: null,
      encoded_input: undefined,
      latency_ms: Number.NaN,
      detail: 'wasm "trap"',
      trace_id: "0af7651916cd43dd8448eb211c80319c",
      shadow: { allow: false, reason: "role_missing" } as never,
    }),
  ],
];

describe("decisionLineWriter", () => {
  it.each(RECORDS)("writes pino's own line: %s", (_name, r) => {
    const ours = capture();
    const theirs = capture();
    const write = decisionLineWriter(ours.logger);
    expect(write).toBeDefined();
    expect(write!(r)).toBe(true);
    theirs.logger.info(decisionLine(r), "decision");
    expect(ours.lines).toEqual(theirs.lines);
    expect(JSON.parse(ours.lines[0]!)).toMatchObject({ msg: "decision", decision_id: r.decision_id });
  });

  it("writes the engine's text for the very input it encoded, and encodes a masked copy", () => {
    // The text differs from JSON.stringify(input) (a space) only to show which one is written.
    const text = `${JSON.stringify(input)} `;
    const { logger, lines } = capture();
    const write = decisionLineWriter(logger)!;
    write(record({ encoded_input: { of: input, json: text } }));
    const masked = { ...input, token: { sub: "***" } };
    write(record({ input: masked, encoded_input: { of: input, json: text } }));
    expect(lines[0]).toContain(`,"input":${text},"latency_ms":`);
    expect(lines[1]).toContain(`,"input":${JSON.stringify(masked)},"latency_ms":`);
    expect(lines[1]).not.toContain("\\u0001");
  });

  it("leaves a line with a redacted or serialised field to pino", () => {
    const { logger, lines } = capture({
      redact: { paths: ["sub"], remove: true },
      serializers: { route: (v: unknown) => `r:${String(v)}` },
    });
    expect(decisionLineWriter(logger)!(record())).toBe(false);
    const other = capture({ serializers: { input: (v: unknown) => v } });
    expect(decisionLineWriter(other.logger)!(record())).toBe(false);
    expect([...lines, ...other.lines]).toEqual([]);
  });

  it.each([
    ["a mixin", { mixin: () => ({ extra: 1 }) }],
    ["a log formatter", { formatters: { log: (o: Record<string, unknown>) => o } }],
    ["a message prefix", { msgPrefix: "[x] " }],
    ["a nested key", { nestedKey: "payload" }],
    ["a streamWrite hook", { hooks: { streamWrite: (s: string) => s } }],
  ])("gives no writer for a logger with %s", (_name, options) => {
    expect(decisionLineWriter(capture(options as pino.LoggerOptions).logger)).toBeUndefined();
  });

  it("writes nothing when info is off, and follows a level set later", () => {
    const { logger, lines } = capture({ level: "warn" });
    const write = decisionLineWriter(logger)!;
    expect(write(record())).toBe(true);
    expect(lines).toEqual([]);
    logger.level = "info";
    write(record());
    expect(lines).toHaveLength(1);
  });
});
