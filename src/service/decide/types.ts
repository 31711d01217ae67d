/**
 * The decision pipeline's shapes: the request every adapter builds, the subject and the answer it gets back (what
 * one decision carries from its start to its record is run.ts's DecisionRun).
 */
import type { Decision } from "../../engine/types.js";
import type { TraceHeaders } from "../tracing/decision-tracer.js";

export interface DecisionRequest {
  method: string;
  /** Raw path as the gateway saw it (query and encoding included). */
  path: string;
  /** The bearer token, or undefined when none was presented. */
  token: string | undefined;
  /** Set when an Authorization header was present but not a single Bearer credential. */
  authorizationInvalid?: boolean;
  /** For the decision log only (never decided on): the gateway's request id, W3C traceparent, client address. */
  trace?: RequestTrace;
}

export interface RequestTrace {
  requestId?: string;
  traceparent?: string;
  clientAddress?: string;
  /** The trace-context headers the adapter may read for its gateway family, as received: the span's parent. */
  headers?: TraceHeaders;
}

export interface Subject {
  sub?: string;
  client_id?: string;
  tenant_id?: string;
  roles: string[];
}

/** The answer never carries the decision's internal `detail` (that goes to the log line only). */
export interface DecisionAnswer extends Omit<Decision, "detail"> {
  decision_id: string;
  subject: Subject | null;
  /** Present on 401 answers: the RFC 6750 header value. */
  www_authenticate?: string;
  /**
   * True when Portier failed to decide (an unexpected error; denied internal_error): an adapter whose protocol
   * tells a failure from a deny (gRPC INTERNAL) answers a failure. Never sent in an answer body.
   */
  failed: boolean;
}

export type Decide = (req: DecisionRequest, adapter: string) => Promise<DecisionAnswer>;
