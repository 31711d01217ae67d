/**
 * The record of one decision and the one place every decision ends, in the way of opa-envoy-plugin's stop():
 * `DecisionRun` carries what the log line needs from the start to the end of a decision (decide.ts alone
 * writes it, from what the stages return); `createRecorder` counts the decision (metrics), writes the
 * decision log line, ends the decision's span (when traced), and hands the answer back. A decision the shadow
 * candidate takes has its line written once the candidate has answered (after the answer is sent), with `shadow`
 * when the candidate answered otherwise.
 */
import type { Logger } from "pino";
import type { PathResult } from "../../engine/index.js";
import type { DecisionInput, RoleCheckMode } from "../../engine/types.js";
import type { ServiceMetrics } from "../metrics.js";
import type { DecisionTrace, TracedDecision } from "../tracing/decision-tracer.js";
import type { Shadow } from "../shadow/shadow.js";
import type { DecisionAnswer, DecisionRequest, Subject } from "./types.js";

/** A raw path kept in the log when it cannot be normalised: bounded, so a huge path cannot bloat the log. */
const MAX_LOGGED_RAW_PATH = 512;

/**
 * One decision's facts for its log line. The first six are set when it starts; the others are written by
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

/** Records a finished decision (metrics and log line) and hands its answer back. */
export type Recorder = (run: DecisionRun, answer: DecisionAnswer) => DecisionAnswer;

/** Where the decision line goes: the logger itself, or the decision log (src/service/decision-logs), later. */
export interface DecisionLineSink {
  info(fields: { decision_id: string } & Record<string, unknown>, msg: "decision"): void;
}

export function createRecorder(
  logger: Logger,
  metrics: ServiceMetrics | undefined,
  currentRevision: () => string | undefined,
  sink: DecisionLineSink = logger,
  shadow?: Pick<Shadow, "take">,
): Recorder {
  const logDecision = (
    fields: { decision_id: string } & Record<string, unknown>,
    input: DecisionInput | undefined,
    a: DecisionAnswer,
  ): void => {
    const taken = shadow?.take(input, a, (differs) =>
      sink.info(differs === undefined ? fields : { ...fields, shadow: differs }, "decision"),
    );
    if (!taken) sink.info(fields, "decision");
  };
  return (run, a) => {
    const seconds = Number(process.hrtime.bigint() - run.started) / 1e9;
    metrics?.decisions.count(a.allow, a.reason, a.flow ?? "none", run.adapter, seconds);
    const { req, subject } = run;
    const path = run.normalised.ok ? run.normalised.path : undefined;
    const revision = run.revision ?? currentRevision();
    // pino's own info(), so the logger's options (level, redaction, destination) apply as to every other line.
    // Never the token or the Authorization header: the policy input carries the verified claims only.
    logDecision(
      {
        event: "decision",
        decision_id: run.decision_id,
        adapter: run.adapter,
        method: req.method,
        path: path ?? null,
        // An invalid path is logged as received (bounded), so the refusal can be traced.
        raw_path: path === undefined ? String(req.path).slice(0, MAX_LOGGED_RAW_PATH) : undefined,
        route: a.route?.template ?? null,
        flow: a.flow,
        client_id: subject?.client_id ?? null,
        sub: subject?.sub ?? null,
        tenant_id: subject?.tenant_id ?? null,
        roles: subject?.roles ?? [],
        allow: a.allow,
        status: a.status,
        reason: a.reason,
        message: a.message,
        detail: run.detail,
        request_id: req.trace?.requestId ?? null,
        traceparent: req.trace?.traceparent ?? null,
        // With tracing on: the decision span's ids (absent when off).
        trace_id: run.trace?.traceId,
        span_id: run.trace?.spanId,
        client_address: req.trace?.clientAddress ?? null,
        would_deny: a.would_deny?.reason ?? null,
        // The revision that decided (a reload may swap the engine while a decision runs).
        revision: revision ?? null,
        // The exact policy input (verified claims the policy reads; never the token), so that
        // `portier replay` can recompute this decision under another policy.
        input: run.input ?? null,
        latency_ms: Math.round(seconds * 1e6) / 1000,
      },
      run.input,
      a,
    );
    run.span?.end({
      decisionId: run.decision_id,
      allow: a.allow,
      reason: a.reason,
      route: a.route?.template,
      flow: a.flow ?? undefined,
      revision,
      // A policy that could not decide is Portier's failure too, not an answer.
      failed: a.failed || a.reason === "policy_error",
    });
    return a;
  };
}
