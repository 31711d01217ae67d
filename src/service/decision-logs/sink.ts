/**
 * A sink of the decision log: where each recorded decision goes once the bundle's log rules have dropped or
 * masked it (pipeline.ts). Every sink gets the same masked decision; each keeps its own bound and counts what
 * it drops (the stdout line: --log-buffer-bytes; the collector: --decision-log-buffer-bytes). A new sink is one
 * file with a factory returning a DecisionSink (or undefined when its options leave it off) and one entry in
 * index.ts's list.
 */
import type { DecisionRecord } from "../decide/record.js";
import type { DecisionLogEvent } from "./event.js";

/** One decision as the sinks receive it: its record and its OPA event, masked alike. */
export interface MaskedDecision {
  record: DecisionRecord;
  /** Built when a sink wants it or the bundle has log rules; undefined otherwise. */
  event: DecisionLogEvent | undefined;
  /** The event as JSON, encoded at most once for every sink (throws when no event was built). */
  encoded: () => string;
}

export interface DecisionSink {
  /** Whether it reads `event`: the pipeline then builds one for every decision. */
  readonly wantsEvent: boolean;
  /** Off the request path; never throws (a sink that cannot take the decision drops it and counts it). */
  write(decision: MaskedDecision): void;
  /** /ready's text when the sink has failed for too long. */
  problem?: () => string | undefined;
  /** Writes or sends what it holds, until `deadline` (epoch ms). */
  close?: (deadline: number) => Promise<void>;
}
