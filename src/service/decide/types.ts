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
  /**
   * Why Portier could not decide, when it could not: its own unexpected error (`internal`, as `failed`) or a
   * policy that failed to evaluate (`policy`, denied policy_error); undefined for a decision. Never sent.
   */
  failure?: "internal" | "policy" | undefined;
}

/**
 * An answer given before any decision: a request an adapter could not read (request_invalid: forged or mixed
 * gateway headers; a body that is not JSON, too large or too slow). Recorded as a decision is (a decision id, a
 * record with its reason for every sink of the decision log) and counted (portier_requests_rejected_total).
 */
export interface Rejection {
  /** The adapter's label, as for decide(). */
  adapter: string;
  /** What was read of the request: its method and path may be unknown (""). */
  req: Pick<DecisionRequest, "method" | "path" | "trace">;
  /** The status answered (400, 403, 408, 413, 415). */
  status: number;
  /** A stable code: request_invalid, invalid_json, invalid_request, payload_too_large, body_timeout, ... */
  reason: string;
  message: string;
}

/**
 * The decision function every adapter calls (decide.ts): `decide(request, adapter)` for a decision, and
 * `decide.reject(rejection)` for an answer given before one, which returns the decision id to answer with.
 */
export type Decide = ((req: DecisionRequest, adapter: string) => Promise<DecisionAnswer>) & {
  reject?: (rejection: Rejection) => string;
};
