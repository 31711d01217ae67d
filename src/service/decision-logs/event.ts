/**
 * A decision log event in the shape of OPA's decision-log plugin (its EventV1), so that what consumes OPA's
 * decision logs consumes Portier's: one per decision, built off the request path from the record the
 * recorder enqueued. `input` is the exact policy input (verified claims, never a token); `result` is the
 * decision together with the subject it was taken for (the same names as the stdout line's fields).
 */

/** The decision line's fields, as the recorder writes them (src/service/decide/run.ts). */
export type DecisionLine = { decision_id: string } & Record<string, unknown>;

/** What the recorder hands over per decision: references only, built into an event later. */
export interface DecisionRecord {
  decision_id: string;
  /** Date.now() when the decision was recorded. */
  time: number;
  /** The exact policy input, or null when the decision was taken before one existed (a refused token). */
  input: unknown;
  /** The decision's fields, as written on the stdout line (allow, status, reason, message, route, sub, ...). */
  result: Record<string, unknown>;
  /** The bundle revision that decided. */
  revision: string | undefined;
  request_id: string | undefined;
  client_address: string | undefined;
  trace_id: string | undefined;
  span_id: string | undefined;
}

export interface DecisionLogEvent {
  labels: Record<string, string>;
  decision_id: string;
  trace_id?: string;
  span_id?: string;
  bundles?: Record<string, { revision: string }>;
  path: string;
  input?: unknown;
  result: unknown;
  erased?: string[];
  masked?: string[];
  requested_by?: string;
  timestamp: string;
  req_id: number;
  request_context?: { http: { headers: Record<string, string[]> } };
}

/** The policy's rule that every event reports (OPA's `path`: the decision's query path). */
export const DECISION_PATH = "portier/decision";

export interface EventContext {
  labels: Record<string, string>;
  /** OPA's bundle name in `bundles` (Portier serves one bundle). */
  bundleName: string;
}

/** The event of `record`; `seq` numbers the decisions of this process (OPA's req_id, an integer). */
export function buildEvent(record: DecisionRecord, seq: number, ctx: EventContext): DecisionLogEvent {
  const event: DecisionLogEvent = {
    labels: ctx.labels,
    decision_id: record.decision_id,
    path: DECISION_PATH,
    input: record.input ?? undefined,
    result: record.result,
    timestamp: new Date(record.time).toISOString(),
    req_id: seq,
  };
  if (record.trace_id) event.trace_id = record.trace_id;
  if (record.span_id) event.span_id = record.span_id;
  if (record.revision) event.bundles = { [ctx.bundleName]: { revision: record.revision } };
  if (record.client_address) event.requested_by = record.client_address;
  if (record.request_id) event.request_context = { http: { headers: { "x-request-id": [record.request_id] } } };
  return event;
}
