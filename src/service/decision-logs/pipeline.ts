/**
 * Where every recorded decision goes after its answer: the request path only appends the decision's log
 * fields to a list (record); once per turn of the event loop the list is processed, off the request path.
 * Each decision becomes an OPA-shaped event; the bundle's drop rule may leave it out (counted apart, not a
 * loss) and its mask rule erases or replaces parts of /input and /result; a rule that fails drops the event
 * (counted: rule_error), never shipping or printing it unmasked. The masked event is shipped (shipper.ts) and
 * its masked values replace those of the stdout line, which is written by pino as before (unless turned off).
 */
import type { Logger } from "pino";
import type { LogRules } from "../../engine/index.js";
import { buildEvent, type DecisionLine, type DecisionRecord, type EventContext } from "./event.js";
import { applyMask, MaskRuleError, parseMask } from "./mask.js";
import type { DecisionLogStats } from "./stats.js";

/** The stdout line's fields that make up the event's result (a mask's /result/<name> changes line.<name>). */
export const RESULT_FIELDS = [
  "allow",
  "status",
  "reason",
  "message",
  "flow",
  "route",
  "client_id",
  "sub",
  "tenant_id",
  "roles",
  "would_deny",
] as const;

/** Decisions waiting for the next turn of the event loop; past this many (a loop stuck for long) they are dropped. */
const MAX_PENDING = 65_536;

/** W3C traceparent: version-traceid-parentid-flags. */
const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;

export interface PipelineOptions {
  /** Writes the stdout line (pino's logger.info(fields, "decision")); undefined: no line. */
  line: ((fields: DecisionLine) => void) | undefined;
  /** Ships an encoded event; undefined: no collector. */
  ship: ((json: string) => void) | undefined;
  /** The mask and drop rules of the bundle serving now. */
  rules: () => LogRules | undefined;
  event: EventContext;
  stats: DecisionLogStats;
  logger: Logger;
}

export class DecisionLogPipeline {
  private pending: DecisionLine[] = [];
  private times: number[] = [];
  private scheduled = false;
  private seq = 0;
  private lastRuleWarning = 0;

  constructor(private readonly o: PipelineOptions) {}

  /** The request path's part: keeps the fields for later. */
  record(fields: DecisionLine): void {
    if (this.pending.length >= MAX_PENDING) {
      this.o.stats.dropped.buffer_full++;
      return;
    }
    this.pending.push(fields);
    this.times.push(Date.now());
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.process);
    }
  }

  /** Processes what waits now (also called on stop, before the shipper's last uploads). */
  readonly process = (): void => {
    this.scheduled = false;
    const batch = this.pending;
    const times = this.times;
    this.pending = [];
    this.times = [];
    const rules = this.o.rules();
    for (let i = 0; i < batch.length; i++) this.one(batch[i]!, times[i]!, rules);
  };

  private one(fields: DecisionLine, time: number, rules: LogRules | undefined): void {
    // No collector: nothing to mask or drop without a line; no rules either (an older bundle): the line as recorded.
    if (this.o.ship === undefined && (rules === undefined || this.o.line === undefined)) return this.o.line?.(fields);
    const result: Record<string, unknown> = {};
    for (const k of RESULT_FIELDS) result[k] = fields[k];
    const trace = typeof fields.traceparent === "string" ? TRACEPARENT.exec(fields.traceparent) : null;
    const record: DecisionRecord = {
      decision_id: fields.decision_id,
      time,
      input: fields.input,
      result,
      revision: typeof fields.revision === "string" ? fields.revision : undefined,
      request_id: typeof fields.request_id === "string" ? fields.request_id : undefined,
      client_address: typeof fields.client_address === "string" ? fields.client_address : undefined,
      // The decision span's ids with tracing on; else the gateway's, from its traceparent.
      trace_id: typeof fields.trace_id === "string" ? fields.trace_id : trace?.[1],
      span_id: typeof fields.span_id === "string" ? fields.span_id : trace?.[2],
    };
    const event = buildEvent(record, ++this.seq, this.o.event);
    // Encoded at most once (the rules ask for it when they read the event whole, shipping needs it), and again
    // when a mask changed the event.
    let json: string | undefined;
    const encoded = (): string => (json ??= JSON.stringify(event));
    let line = fields;
    if (rules) {
      try {
        const { drop, mask } = rules.evaluate(event as unknown as Record<string, unknown>, encoded);
        if (typeof drop !== "boolean") throw new MaskRuleError("drop: must be true or false");
        if (drop) {
          this.o.stats.ruleDropped++;
          return;
        }
        const ops = parseMask(mask);
        if (ops.length > 0) {
          // The input and result are shared with the answer (and the decision memo): mask copies.
          const parts = structuredClone({ input: event.input, result: event.result });
          const { erased, masked } = applyMask(parts, ops);
          event.input = parts.input;
          event.result = parts.result;
          if (erased.length) event.erased = erased;
          if (masked.length) event.masked = masked;
          json = undefined;
          line = { ...fields, input: parts.input };
          const r = parts.result as Record<string, unknown>;
          for (const k of RESULT_FIELDS) line[k] = r[k];
        }
      } catch (err) {
        this.o.stats.dropped.rule_error++;
        this.warnRuleError(err);
        return;
      }
    }
    this.o.line?.(line);
    this.o.ship?.(encoded());
  }

  /** A failing rule fails for every event: reported at most once a minute. */
  private warnRuleError(err: unknown): void {
    const now = Date.now();
    if (now - this.lastRuleWarning < 60_000) return;
    this.lastRuleWarning = now;
    this.o.logger.error(
      { event: "decision_log_rule_failed", error: err instanceof Error ? err.message : String(err) },
      "the bundle's decision-log mask or drop rule failed; the event is dropped " +
        '(portier_decision_logs_dropped_total{reason="rule_error"})',
    );
  }
}
