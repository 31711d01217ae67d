/**
 * The decision log line, built by hand and written to the logger's own destination: byte for byte the line
 * `logger.info(fields, "decision")` writes (the logger's level prefix, time and bindings; each value encoded
 * the way pino encodes it), without pino's generic per-key work on the hot path. A logger configured in a
 * way this writer does not reproduce (mixin, formatters, serializers or redaction of these fields, hooks,
 * nested key, message prefix, a multistream) gets `logger.info` instead. The fields never hold the token
 * or the Authorization header (the policy input carries the verified claims only); bounds are the caller's
 * (raw_path) and the destination's (bounded buffer).
 */
import { pino, type Logger } from "pino";

/** The fields of a decision line, in the order they are written (undefined values are left out, as pino does). */
export interface DecisionLogFields {
  event: "decision";
  decision_id: string;
  adapter: string;
  method: unknown;
  path: string | null;
  raw_path: string | undefined;
  route: unknown;
  flow: unknown;
  client_id: unknown;
  sub: unknown;
  tenant_id: unknown;
  roles: unknown;
  allow: unknown;
  status: unknown;
  reason: unknown;
  message: unknown;
  detail?: string | undefined;
  request_id: unknown;
  traceparent: unknown;
  client_address: unknown;
  would_deny: unknown;
  revision: unknown;
  input: unknown;
  latency_ms: number;
}

export type DecisionLog = (fields: DecisionLogFields) => void;

const FIELDS = ["event", "decision_id", "adapter", "method", "path", "raw_path", "route", "flow", "client_id", "sub", "tenant_id", "roles", "allow", "status", "reason", "message", "detail", "request_id", "traceparent", "client_address", "would_deny", "revision", "input", "latency_ms"] as const satisfies readonly (keyof DecisionLogFields)[];
const PREFIXES = FIELDS.map((k) => `,"${k}":`);
const INFO = 30;

/** pino's string encoding (lib/tools.js asString): JSON.stringify on Node 25+, a fast path before. */
const asString: (s: string) => string =
  Number(process.versions.node.split(".")[0]) >= 25
    ? (s) => JSON.stringify(s)
    : (str) => {
        const l = str.length;
        if (l > 100) return JSON.stringify(str);
        let result = "";
        let last = 0;
        let found = false;
        let point = 255;
        for (let i = 0; i < l && point >= 32; i++) {
          point = str.charCodeAt(i);
          if (point === 34 || point === 92) {
            result += str.slice(last, i) + "\\";
            last = i;
            found = true;
          }
        }
        result = found ? result + str.slice(last) : str;
        return point < 32 ? JSON.stringify(str) : `"${result}"`;
      };

/** One value as pino writes it, or undefined when pino leaves the key out. */
function encode(value: unknown, stringifySafe: (v: unknown) => string): string | undefined {
  switch (typeof value) {
    case "undefined":
    case "function":
      return undefined;
    case "number":
      return Number.isFinite(value) ? String(value) : "null";
    case "boolean":
      return value ? "true" : "false";
    case "string":
      return asString(value);
    default:
      try {
        return JSON.stringify(value);
      } catch {
        try {
          return stringifySafe(value);
        } catch {
          return '"[unable to serialize, circular reference is too complex to analyze]"';
        }
      }
  }
}

type Internals = Record<symbol, unknown>;

/** pino's internal symbols (pino.symbols; msgPrefixSym is there at run time, not in the types). */
const S = pino.symbols as unknown as Record<string, symbol | undefined>;
const sym = (name: string): symbol => S[name] ?? Symbol(`missing pino symbol ${name}`);
const HOOKS = sym("hooksSym");
const FORMATTERS = sym("formattersSym");
const SERIALIZERS = sym("serializersSym");
const STRINGIFIERS = sym("stringifiersSym");
const STRINGIFY_SAFE = sym("stringifySafeSym");
const STREAM = sym("streamSym");
const MIXIN = sym("mixinSym");
const NESTED_KEY = sym("nestedKeySym");
const MSG_PREFIX = sym("msgPrefixSym");
const MESSAGE_KEY = sym("messageKeySym");
const WILDCARD = sym("wildcardFirstSym");
const TIME = sym("timeSym");
const LEVEL_CACHE = sym("lsCacheSym");
const CHINDINGS = sym("chindingsSym");
const END = sym("endSym");
const NEEDS_METADATA = sym("needsMetadataGsym");

/** Whether `logger.info(fields, "decision")` is plain: nothing but level, time, bindings, fields and msg. */
function writesPlainLines(logger: Logger): boolean {
  const l = logger as unknown as Internals;
  const hooks = l[HOOKS] as { logMethod?: unknown; streamWrite?: unknown } | undefined;
  const formatters = l[FORMATTERS] as { log?: unknown } | undefined;
  const serializers = (l[SERIALIZERS] ?? {}) as Record<string, unknown>;
  const stringifiers = (l[STRINGIFIERS] ?? {}) as Record<string | symbol, unknown>;
  const stream = l[STREAM] as (Internals & { write?: unknown }) | undefined;
  const touched = (k: string): boolean => serializers[k] !== undefined || stringifiers[k] !== undefined;
  return (
    !l[MIXIN] &&
    !hooks?.logMethod &&
    !hooks?.streamWrite &&
    !formatters?.log &&
    !l[NESTED_KEY] &&
    typeof l[MSG_PREFIX] !== "string" &&
    l[MESSAGE_KEY] === "msg" &&
    !FIELDS.some(touched) &&
    !touched("msg") &&
    stringifiers[WILDCARD] === undefined &&
    typeof l[TIME] === "function" &&
    typeof (l[LEVEL_CACHE] as Record<number, string> | undefined)?.[INFO] === "string" &&
    typeof l[CHINDINGS] === "string" &&
    typeof l[END] === "string" &&
    stream !== undefined &&
    typeof stream.write === "function" &&
    stream[NEEDS_METADATA] !== true
  );
}

export function createDecisionLog(logger: Logger): DecisionLog {
  if (!writesPlainLines(logger)) return (fields) => logger.info(fields, "decision");
  const l = logger as unknown as Internals;
  const time = (l[TIME] as () => string).bind(logger);
  const stringifySafe = (l[STRINGIFY_SAFE] as ((v: unknown) => string) | undefined) ?? ((v) => JSON.stringify(v));
  const tail = `,"msg":"decision"${l[END] as string}`;
  return (fields) => {
    if (!logger.isLevelEnabled("info")) return;
    // Read per line, like pino: the level prefix, the bindings and the stream the logger holds now.
    let line = (l[LEVEL_CACHE] as Record<number, string>)[INFO]! + time() + (l[CHINDINGS] as string);
    for (let i = 0; i < FIELDS.length; i++) {
      const v = encode(fields[FIELDS[i]!], stringifySafe);
      if (v !== undefined) line += PREFIXES[i]! + v;
    }
    (l[STREAM] as { write(line: string): unknown }).write(line + tail);
  };
}
