/**
 * The decision line written as pino writes it, encoded in one JSON.stringify of its fields with the input's JSON
 * text spliced in as the engine evaluated it (DecisionRecord.encoded_input), instead of pino's field-by-field
 * encoding and a second encoding of the input (a quarter of a batch item's CPU in the AuthZEN benchmark). The
 * bytes are pino's own line's: its level, time and bindings (read from the logger through pino.symbols), the
 * fields in the same order, then the message. Only for a plain logger (no mixin, hooks, log formatter, nested
 * key or message prefix; a stream that needs no metadata): any other gets undefined, and its caller writes with
 * logger.info as before.
 */
import { pino, type Logger } from "pino";
import type { DecisionRecord } from "../decide/record.js";
import { decisionLineHead } from "./line.js";

const S = pino.symbols;
const MSG_PREFIX = (S as unknown as Record<string, symbol>)["msgPrefixSym"];
const NEEDS_METADATA = Symbol.for("pino.metadata");
/** The line's last fields, written after the head. */
const LAST = ["input", "latency_ms", "shadow"];

type Internals = Record<symbol, unknown>;

/**
 * A writer of decision lines for `logger`, or undefined when its lines are not plain pino lines. The writer answers
 * false, writing nothing, for a line with a field pino would redact or serialise (none of today's fields).
 */
export function decisionLineWriter(logger: Logger): ((record: DecisionRecord) => boolean) | undefined {
  const l = logger as unknown as Internals;
  const hooks = l[S.hooksSym] as { logMethod?: unknown; streamWrite?: unknown } | undefined;
  const formatters = l[S.formattersSym] as { log?: unknown } | undefined;
  const stream = l[S.streamSym] as { write?: (s: string) => unknown; [NEEDS_METADATA]?: unknown } | undefined;
  const time = l[S.timeSym];
  const head = (l[S.lsCacheSym] as Record<number, string> | undefined)?.[logger.levels.values.info!];
  if (
    l[S.mixinSym] ||
    hooks?.logMethod ||
    hooks?.streamWrite ||
    formatters?.log ||
    l[S.nestedKeySym] ||
    (MSG_PREFIX !== undefined && l[MSG_PREFIX]) ||
    typeof time !== "function" ||
    typeof head !== "string" ||
    typeof l[S.chindingsSym] !== "string" ||
    typeof stream?.write !== "function" ||
    stream[NEEDS_METADATA] === true
  )
    return undefined;
  const timeOf = time as () => string;
  // Fields pino would not write as JSON.stringify does: redacted paths' first keys, serialised keys.
  const special = [
    ...Object.keys((l[S.stringifiersSym] as object | undefined) ?? {}),
    ...Object.keys((l[S.serializersSym] as object | undefined) ?? {}),
  ];
  const end = l[S.endSym];
  const tail = `,${JSON.stringify(l[S.messageKeySym] ?? "msg")}:"decision"${typeof end === "string" ? end : "}\n"}`;
  const write = stream.write.bind(stream);
  return (record) => {
    // The level read per line: a level set later is the logger's, as for logger.info.
    if (!logger.isLevelEnabled("info")) return true;
    const fields = decisionLineHead(record);
    for (const key of special) if (Object.hasOwn(fields, key) || LAST.includes(key)) return false;
    const { input, encoded_input: encoded } = record;
    if (input === undefined) return false;
    // The engine's text only for the very object it encoded: a masked copy is encoded here.
    const inputJson = encoded !== undefined && encoded.of === input ? encoded.json : JSON.stringify(input);
    const text = JSON.stringify(fields);
    const shadow = record.shadow ? `,"shadow":${JSON.stringify(record.shadow)}` : "";
    write(
      `${head}${timeOf()}${l[S.chindingsSym] as string},${text.slice(1, -1)},"input":${inputJson}` +
        `,"latency_ms":${JSON.stringify(record.latency_ms)}${shadow}${tail}`,
    );
    return true;
  };
}
