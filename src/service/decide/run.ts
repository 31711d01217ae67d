/**
 * The record of one decision and the one place every decision ends, in the way of opa-envoy-plugin's stop():
 * `DecisionRun` carries what the record needs from the start to the end of a decision (decide.ts alone
 * writes it, from what the stages return); `createRecorder` counts the decision (metrics), builds its one typed
 * record (record.ts) for the decision log's sinks, ends the decision's span (when traced), and hands the answer
 * back. A decision the shadow candidate takes has its record written once the candidate has answered (after the
 * answer is sent), with `shadow` when the candidate answered otherwise.
 */
import { randomUUID } from "node:crypto";
import { normalisePath, type PathResult } from "../../engine/index.js";
import type { DecisionInput, RoleCheckMode } from "../../engine/types.js";
import type { ServiceMetrics } from "../metrics.js";
import type { DecisionTrace, DecisionTracer, TracedDecision } from "../tracing/decision-tracer.js";
import type { Shadow } from "../shadow/shadow.js";
import type { DecisionRecord, DecisionRecordSink, RecordedRequest } from "./record.js";
import type { DecisionAnswer, DecisionRequest, Rejection, Subject } from "./types.js";

/** A raw path kept in the log when it cannot be normalised: bounded, so a huge path cannot bloat the log. */
const MAX_LOGGED_RAW_PATH = 512;

/**
 * One decision's facts for its record. The first six are set when it starts; the others are written by
 * decide.ts alone, each from a stage's result: the subject (stage 2), the policy input and the revision that
 * evaluated it (stages 3-4), the WWW-Authenticate value of a refused token (stage 1), the decision's detail.
 */
export interface DecisionRun {
  readonly started: bigint;
  readonly decision_id: string;
  readonly req: DecisionRequest;
  readonly adapter: string;
  readonly mode: RoleCheckMode;
  readonly normalised: PathResult;
  subject: Subject | null;
  input: DecisionInput | undefined;
  /** The input's JSON text as the engine evaluated it, when it was encoded. */
  inputText?: string | undefined;
  revision: string | undefined;
  www: string | undefined;
  /** The decision's internal text (a wasm trap's), for the log line only: never in the answer. */
  detail: string | undefined;
  /** Portier failed to decide (an unexpected error): the answer says so (DecisionAnswer.failed). */
  failed: boolean;
  /** With tracing on: this decision's span, and its ids (the log line's and the shipped event's trace_id, span_id). */
  span: TracedDecision | undefined;
  trace: DecisionTrace | undefined;
}

/**
 * A decision's start, the same for every endpoint: the clock, a new decision id, the path as judged (normalised
 * up front, so that the record names it even when the token fails), and with tracing on its span.
 */
export function startRun(
  req: DecisionRequest,
  adapter: string,
  mode: RoleCheckMode,
  normalised: PathResult,
  tracer: DecisionTracer | undefined,
): DecisionRun {
  const started = process.hrtime.bigint();
  const span = tracer?.start(adapter, req.trace?.headers);
  return {
    started,
    decision_id: randomUUID(),
    req,
    adapter,
    mode,
    normalised,
    subject: null,
    input: undefined,
    revision: undefined,
    www: undefined,
    detail: undefined,
    failed: false,
    span,
    trace: span?.trace,
  };
}

/** Records a finished decision (metrics and record) and hands its answer back. */
export type Recorder = (run: DecisionRun, answer: DecisionAnswer) => DecisionAnswer;

/** The request part of a record, from what the adapter handed over. */
export function recordedRequest(
  req: Pick<DecisionRequest, "method" | "path" | "trace">,
  adapter: string,
  normalised: PathResult | undefined,
): RecordedRequest {
  const path = normalised?.ok ? normalised.path : undefined;
  return {
    adapter,
    method: req.method,
    path: path ?? null,
    // An invalid path is logged as received (bounded), so the refusal can be traced.
    raw_path: path === undefined ? String(req.path).slice(0, MAX_LOGGED_RAW_PATH) : undefined,
    client_address: req.trace?.clientAddress ?? null,
    request_id: req.trace?.requestId ?? null,
    traceparent: req.trace?.traceparent ?? null,
  };
}

export function createRecorder(
  metrics: ServiceMetrics | undefined,
  currentRevision: () => string | undefined,
  sink: DecisionRecordSink,
  shadow?: Pick<Shadow, "take">,
): Recorder {
  const write = (record: DecisionRecord, a: DecisionAnswer): void => {
    const taken = shadow?.take(record.input ?? undefined, a, (differs) => {
      if (differs !== undefined) record.shadow = differs;
      sink.record(record);
    });
    if (!taken) sink.record(record);
  };
  return (run, a) => {
    const seconds = Number(process.hrtime.bigint() - run.started) / 1e9;
    metrics?.decisions.count(a.allow, a.reason, a.flow ?? "none", run.adapter, seconds);
    const { subject } = run;
    const revision = run.revision ?? currentRevision();
    // Never the token or the Authorization header: the policy input carries the verified claims only.
    write(
      {
        decision_id: run.decision_id,
        time: Date.now(),
        request: recordedRequest(run.req, run.adapter, run.normalised),
        // The exact policy input, so that `portier replay` can recompute this decision under another policy.
        input: run.input ?? null,
        encoded_input:
          run.input !== undefined && run.inputText !== undefined ? { of: run.input, json: run.inputText } : undefined,
        result: {
          allow: a.allow,
          status: a.status,
          reason: a.reason,
          message: a.message,
          flow: a.flow,
          route: a.route?.template ?? null,
          client_id: subject?.client_id ?? null,
          sub: subject?.sub ?? null,
          tenant_id: subject?.tenant_id ?? null,
          roles: subject?.roles ?? [],
          would_deny: a.would_deny?.reason ?? null,
        },
        revision: revision ?? null,
        // With tracing on: the decision span's ids (absent when off).
        trace_id: run.trace?.traceId,
        span_id: run.trace?.spanId,
        detail: run.detail,
        latency_ms: Math.round(seconds * 1e6) / 1000,
      },
      a,
    );
    // The span's facts are built only for a recorded span (an unsampled one is ended as it is).
    if (run.span?.trace.sampled)
      run.span.end({
        decisionId: run.decision_id,
        allow: a.allow,
        reason: a.reason,
        route: a.route?.template,
        flow: a.flow ?? undefined,
        revision,
        // A policy that could not decide is Portier's failure too, not an answer.
        failed: a.failure !== undefined,
      });
    else run.span?.end();
    return a;
  };
}

/**
 * Records an answer given before any decision (types.ts Rejection): counted by adapter and reason, and one record
 * for every sink, as a deny with no input and no subject. Returns its decision id, for the answer.
 */
export function createRejecter(
  metrics: ServiceMetrics | undefined,
  currentRevision: () => string | undefined,
  sink: DecisionRecordSink,
): (rejection: Rejection) => string {
  return ({ adapter, req, status, reason, message }) => {
    metrics?.decisions.reject(adapter, reason);
    const decisionId = randomUUID();
    sink.record({
      decision_id: decisionId,
      time: Date.now(),
      request: recordedRequest(req, adapter, normalisePath(req.path)),
      input: null,
      result: {
        allow: false,
        status,
        reason,
        message,
        flow: null,
        route: null,
        client_id: null,
        sub: null,
        tenant_id: null,
        roles: [],
        would_deny: null,
      },
      revision: currentRevision() ?? null,
      trace_id: undefined,
      span_id: undefined,
      detail: undefined,
      latency_ms: 0,
    });
    return decisionId;
  };
}
