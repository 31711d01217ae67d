/**
 * A decision log event in the shape of OPA's decision-log plugin (its EventV1), so that what consumes OPA's
 * decision logs consumes Portier's: one per decision, built off the request path from the record the
 * recorder enqueued (src/service/decide/record.ts). `input` is the exact policy input (verified claims, never a
 * token); `result` is the decision together with the subject it was taken for (the same names as the stdout
 * line's fields); `request_context` the request (OPA's carries its headers; Portier's also the adapter, method
 * and path, so that a refused token still names what it was aimed at); `requested_by` the client's address.
 */
import type { DecisionRecord } from "../decide/record.js";
import { parseTraceparent } from "../decide/traceparent.js";

/** A type, not an interface: it is then a Record<string, unknown>, which the bundle's log rules read. */
export type DecisionLogEvent = {
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
  /** The request the decision answered, whatever its outcome (the adapter that took it, method and path). */
  request_context: { adapter: string; http: { method: string; path: string; headers?: Record<string, string[]> } };
};

/** The policy's rule that every event reports (OPA's `path`: the decision's query path). */
export const DECISION_PATH = "portier/decision";

export interface EventContext {
  labels: Record<string, string>;
  /** OPA's bundle name in `bundles` (Portier serves one bundle). */
  bundleName: string;
}

/** The last time written and its ISO text: the decisions of a batch, or of one millisecond, share it. */
let lastTime = Number.NaN;
let lastTimestamp = "";
function timestampOf(time: number): string {
  if (time !== lastTime) {
    lastTimestamp = new Date(time).toISOString();
    lastTime = time;
  }
  return lastTimestamp;
}

/** The event of `record`; `seq` numbers the decisions of this process (OPA's req_id, an integer). */
export function buildEvent(record: DecisionRecord, seq: number, ctx: EventContext): DecisionLogEvent {
  const { request } = record;
  const http: DecisionLogEvent["request_context"]["http"] = {
    method: request.method,
    path: request.path ?? request.raw_path ?? "",
  };
  if (request.request_id) http.headers = { "x-request-id": [request.request_id] };
  const event: DecisionLogEvent = {
    labels: ctx.labels,
    decision_id: record.decision_id,
    path: DECISION_PATH,
    input: record.input ?? undefined,
    result: record.result,
    timestamp: timestampOf(record.time),
    req_id: seq,
    request_context: { adapter: request.adapter, http },
  };
  // The decision span's ids with tracing on; else the gateway's, from its traceparent.
  const trace = request.traceparent === null ? undefined : parseTraceparent(request.traceparent);
  const traceId = record.trace_id ?? trace?.traceId;
  const spanId = record.span_id ?? trace?.spanId;
  if (traceId) event.trace_id = traceId;
  if (spanId) event.span_id = spanId;
  if (record.revision) event.bundles = { [ctx.bundleName]: { revision: record.revision } };
  if (request.client_address) event.requested_by = request.client_address;
  return event;
}
