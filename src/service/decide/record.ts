/**
 * The one record of a decision, built once by the recorder (run.ts) and handed to every sink of the decision log
 * (src/service/decision-logs): the stdout line and the collector's OPA event are both written from it. Its
 * parts are those of OPA's decision-log event: the request, the exact policy input, the result (the decision
 * with the subject it was taken for), the revision that decided, and the trace ids. An answer given before any
 * decision (a refused request) is recorded the same way, with a null input.
 */
import type { DecisionInput, Flow } from "../../engine/types.js";
import type { ShadowVerdict } from "../shadow/shadow.js";

/** The request a decision answered, whatever its outcome. */
export interface RecordedRequest {
  /** The adapter that took it: decide, nginx, traefik, caddy, envoy, envoy-grpc, ... */
  adapter: string;
  method: string;
  /** The normalised path; null when the path was refused (raw_path then holds it as received, bounded). */
  path: string | null;
  raw_path: string | undefined;
  /** The client's address, as the gateway in front reports it (only from a trusted gateway). */
  client_address: string | null;
  request_id: string | null;
  traceparent: string | null;
}

/** The decision and the subject it was taken for: OPA's `result`, the names of the stdout line's fields. */
export interface RecordedResult {
  allow: boolean;
  status: number;
  reason: string;
  message: string;
  flow: Flow | null | undefined;
  route: string | null;
  client_id: string | null;
  sub: string | null;
  tenant_id: string | null;
  roles: string[];
  would_deny: string | null;
}

export interface DecisionRecord {
  decision_id: string;
  /** Date.now() when the decision ended. */
  time: number;
  request: RecordedRequest;
  /** The exact policy input (verified claims, never a token); null when none was built (a refused token). */
  input: DecisionInput | null;
  /**
   * The input's JSON text, valid for the very object `of` only: a record whose input was replaced (a masked copy)
   * still carries it, and it then does not apply (`of` is not its input).
   */
  encoded_input?: { of: DecisionInput; json: string } | undefined;
  result: RecordedResult;
  /** The bundle revision that decided (a reload may swap the engine while a decision runs). */
  revision: string | null;
  /** With tracing on: the decision span's ids. */
  trace_id: string | undefined;
  span_id: string | undefined;
  /** The decision's internal text (a wasm trap's): for the stdout line only, never shipped or answered. */
  detail: string | undefined;
  latency_ms: number;
  /** With --shadow-bundle: the candidate's verdict where it differs. */
  shadow?: ShadowVerdict;
}

/** Where the recorder hands each record: the decision log (its sinks), or one sink directly. */
export interface DecisionRecordSink {
  record(record: DecisionRecord): void;
}
