/**
 * The decision log line: pino's own `logger.info(fields, "decision")`, so the logger's options (level,
 * bindings, redaction, serializers, formatters, destination) apply to it as to every other line. The fields
 * never hold the token or the Authorization header (the policy input carries the verified claims only);
 * bounds are the caller's (raw_path) and the destination's (bounded buffer).
 */
import type { Logger } from "pino";

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
  /** With tracing on: the decision span's trace and span ids (absent when off). */
  trace_id?: string | undefined;
  span_id?: string | undefined;
  client_address: unknown;
  would_deny: unknown;
  revision: unknown;
  input: unknown;
  latency_ms: number;
}

export type DecisionLog = (fields: DecisionLogFields) => void;

export function createDecisionLog(logger: Logger): DecisionLog {
  return (fields) => logger.info(fields, "decision");
}
