/**
 * Where every recorded decision goes after its answer: the request path only appends the decision's record to a
 * list (record); once per turn of the event loop the list is processed, off the request path. Each record
 * becomes an OPA-shaped event when a sink wants one or the bundle's log rules read more of it than its input and
 * result (without that, the rules are asked on those two alone); the bundle's drop rule may leave
 * it out (counted apart, not a loss) and its mask rule erases or replaces parts of /input and /result; a rule
 * that fails drops the decision (counted: rule_error), never writing it unmasked anywhere. Every sink (sink.ts)
 * then gets the same masked record and event.
 */
import type { Logger } from "pino";
import type { LogRules } from "../../engine/index.js";
import type { DecisionRecord, RecordedResult } from "../decide/record.js";
import type { DecisionInput } from "../../engine/types.js";
import { DeferredQueue } from "../deferred-queue.js";
import { buildEvent, type DecisionLogEvent, type EventContext } from "./event.js";
import { applyMask, MaskRuleError, parseMask } from "./mask.js";
import type { DecisionSink, MaskedDecision } from "./sink.js";
import type { DecisionLogStats } from "./stats.js";

/** Decisions waiting for the next turn of the event loop; past this many (a loop stuck for long) they are dropped. */
const MAX_PENDING = 65_536;

const NO_EVENT = (): string => {
  throw new Error("no decision-log event was built: no sink asked for one");
};

/** What the rules are asked on when they read no more of the event (and no sink reads it). */
type InputAndResult = { input: unknown; result: unknown };

export interface PipelineOptions {
  /** Where each masked decision goes (an empty list: nothing is written). */
  sinks: readonly DecisionSink[];
  /** The mask and drop rules of the bundle serving now. */
  rules: () => LogRules | undefined;
  event: EventContext;
  stats: DecisionLogStats;
  logger: Logger;
}

export class DecisionLogPipeline {
  private readonly pending: DeferredQueue<DecisionRecord>;
  private seq = 0;
  private lastRuleWarning = 0;
  private readonly wantsEvent: boolean;

  constructor(private readonly o: PipelineOptions) {
    this.wantsEvent = o.sinks.some((s) => s.wantsEvent);
    this.pending = new DeferredQueue<DecisionRecord>({
      max: MAX_PENDING,
      process: (batch) => this.write(batch),
      dropped: () => this.o.stats.dropped.buffer_full++,
    });
  }

  /** The request path's part: keeps the record for later. */
  record(record: DecisionRecord): void {
    this.pending.offer(record);
  }

  /** Processes what waits now (also called on stop, before the sinks' last writes). */
  process(): void {
    this.pending.flush();
  }

  private write(batch: readonly DecisionRecord[]): void {
    if (this.o.sinks.length === 0) return;
    const rules = this.o.rules();
    for (const record of batch) {
      const decision = this.masked(record, rules);
      if (decision) for (const sink of this.o.sinks) sink.write(decision);
    }
  }

  /** The record and its event as every sink gets them; undefined when dropped (by the rule, or a failing rule). */
  private masked(record: DecisionRecord, rules: LogRules | undefined): MaskedDecision | undefined {
    // No sink reads the event and no rules (an older bundle): the record as recorded.
    if (!this.wantsEvent && rules === undefined) return { record, event: undefined, encoded: NO_EVENT };
    // No sink reads the event and the rules read only its input and result: they are asked on those two alone, and
    // no event is built (the stdout line's case, with the bundled rules, which read input.token).
    const partial = !this.wantsEvent && rules?.reads?.every((path) => path[0] === "input" || path[0] === "result");
    const event: DecisionLogEvent | InputAndResult = partial
      ? { input: record.input ?? undefined, result: record.result }
      : buildEvent(record, ++this.seq, this.o.event);
    // Encoded at most once (the rules ask for it when they read the event whole, shipping needs it), and again
    // when a mask changed the event.
    let json: string | undefined;
    const encoded = partial ? NO_EVENT : (): string => (json ??= JSON.stringify(event));
    const built = partial ? undefined : (event as DecisionLogEvent);
    if (!rules) return { record, event: built, encoded };
    try {
      const { drop, mask } = rules.evaluate(event, encoded);
      if (typeof drop !== "boolean") throw new MaskRuleError("drop: must be true or false");
      if (drop) {
        this.o.stats.ruleDropped++;
        return undefined;
      }
      const ops = parseMask(mask);
      if (ops.length === 0) return { record, event: built, encoded };
      // The input and result are shared with the answer (and the decision memo): mask copies.
      const parts = structuredClone({ input: event.input, result: event.result });
      const { erased, masked } = applyMask(parts, ops);
      event.input = parts.input;
      event.result = parts.result;
      if (built && erased.length) built.erased = erased;
      if (built && masked.length) built.masked = masked;
      json = undefined;
      const input = (parts.input ?? null) as DecisionInput | null;
      return { record: { ...record, input, result: parts.result as RecordedResult }, event: built, encoded };
    } catch (err) {
      this.o.stats.dropped.rule_error++;
      this.warnRuleError(err);
      return undefined;
    }
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
