/**
 * The stdout line of a decision, from its record: the fields every decision line has carried (pino writes
 * them, so the logger's level, redaction and destination apply as to every other line). Never the token or the
 * Authorization header: the policy input carries the verified claims only.
 */
import type { DecisionRecord } from "../decide/record.js";

/** The decision line's fields, as written (what `portier replay` reads back). */
export type DecisionLine = { decision_id: string } & Record<string, unknown>;

/** Every field of the line but the last ones (input, latency_ms, shadow), in the line's order. */
export function decisionLineHead(r: DecisionRecord): DecisionLine {
  const { request: q, result: a } = r;
  return {
    event: "decision",
    decision_id: r.decision_id,
    adapter: q.adapter,
    method: q.method,
    path: q.path,
    raw_path: q.raw_path,
    route: a.route,
    flow: a.flow,
    client_id: a.client_id,
    sub: a.sub,
    tenant_id: a.tenant_id,
    roles: a.roles,
    allow: a.allow,
    status: a.status,
    reason: a.reason,
    message: a.message,
    detail: r.detail,
    request_id: q.request_id,
    traceparent: q.traceparent,
    trace_id: r.trace_id,
    span_id: r.span_id,
    client_address: q.client_address,
    would_deny: a.would_deny,
    revision: r.revision,
  };
}

export function decisionLine(r: DecisionRecord): DecisionLine {
  const line: DecisionLine = { ...decisionLineHead(r), input: r.input, latency_ms: r.latency_ms };
  if (r.shadow) line.shadow = r.shadow;
  return line;
}
