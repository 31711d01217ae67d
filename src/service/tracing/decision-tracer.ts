/**
 * One OpenTelemetry server span per decision, parented on the span the gateway sent (W3C traceparent/
 * tracestate, else B3 single or multi: whichever headers the adapter was allowed to read for its gateway
 * family), with child spans for token verification and policy evaluation, exported over OTLP/HTTP by a batch
 * processor off the request path. Loaded only when tracing is on (tracing-env.ts): the SDK is imported here,
 * dynamically, so a service without an endpoint loads none of it. A span never holds a token or a header
 * value: its attributes are the decision's id, outcome, route template, flow, adapter and bundle revision.
 */
import type { Context, DiagLogger, Span, Tracer, TextMapGetter, TextMapPropagator } from "@opentelemetry/api";
import type { SpanExporter } from "@opentelemetry/sdk-trace";
import type { Logger } from "pino";
import { redactUrls } from "../../reload/index.js";
import type { TracingSettings } from "./tracing-env.js";
import { randomUUID } from "node:crypto";
import { buildInfo } from "../build-info.js";

/** Trace-context headers as the adapter read them (lower-case names, every value in order). */
export type TraceHeaders = ReadonlyMap<string, readonly string[]>;

/** The ids the decision log line and the shipped event carry: this decision's own span. */
export interface DecisionTrace {
  readonly traceId: string;
  readonly spanId: string;
  /** Whether the span is recorded and exported (the sampler's choice, or the gateway's). */
  readonly sampled: boolean;
}

/** What the decision span records when the decision ends. */
export interface DecisionFacts {
  decisionId: string;
  allow: boolean;
  reason: string;
  route: string | undefined;
  flow: string | undefined;
  revision: string | undefined;
  /** An error of Portier's (internal_error, policy_error): the span's status is ERROR. */
  failed: boolean;
}

export type StepName = "portier.verify_token" | "portier.evaluate";

export interface TracedDecision {
  readonly trace: DecisionTrace;
  /** A child span of this decision, or undefined when the decision is not recorded (nothing would export it). */
  step(name: StepName): Span | undefined;
  /** Ends the span; `facts` are its attributes, given when the decision is recorded (`trace.sampled`). */
  end(facts?: DecisionFacts): void;
}

export interface DecisionTracer {
  /** Starts the span of a decision made by `adapter`, from the trace headers its gateway sent (if any). */
  start(adapter: string, headers: TraceHeaders | undefined): TracedDecision;
  /** Exports what is pending, within timeoutMs, and stops. */
  shutdown(timeoutMs: number): Promise<void>;
}

const DECISION_SPAN = "portier.decide";

/**
 * The resource every span carries: OTEL_RESOURCE_ATTRIBUTES, the service name, the version of Portier running
 * (service.version) and an id of this process (service.instance.id, a UUID per process: each --workers process
 * is an instance), either of the last two set by OTEL_RESOURCE_ATTRIBUTES when it names them.
 */
function resourceOf(settings: TracingSettings): Record<string, string> {
  return {
    "service.version": buildInfo().version,
    "service.instance.id": randomUUID(),
    ...settings.resourceAttributes,
    "service.name": settings.serviceName,
  };
}

/**
 * The propagators read a header through this getter. A header sent more than once is ambiguous (some hop
 * passed a client's copy along), so it is not read at all, as the adapters refuse a repeated forwarded header;
 * tracestate is the exception: W3C allows it to be split over several headers, joined with ",".
 */
const GETTER: TextMapGetter<TraceHeaders> = {
  keys: (carrier) => [...carrier.keys()],
  get(carrier, key) {
    const values = carrier.get(key);
    if (values === undefined) return undefined;
    if (key === "tracestate") return values.join(",");
    return values.length === 1 ? values[0] : undefined;
  },
};

/** OpenTelemetry's own warnings (a span queue full and spans dropped, an export that failed) go to the log. */
function diagLogger(logger: Logger): DiagLogger {
  // The SDK's text (an error as JSON, a count of dropped spans): bounded, and any URL in it without credentials.
  const warn = (message: string, ...args: unknown[]): void =>
    logger.warn(
      {
        event: "tracing_problem",
        detail: redactUrls([message, ...args.map(String)].join(" ").slice(0, 2000)).slice(0, 500),
      },
      "tracing: OpenTelemetry reported a problem",
    );
  const none = (): void => undefined;
  return { error: warn, warn, info: none, debug: none, verbose: none };
}

/** `exporter` replaces the OTLP exporter (tests: the SDK's in-memory one). */
export async function startDecisionTracer(
  settings: TracingSettings,
  logger: Logger,
  exporter?: SpanExporter,
): Promise<DecisionTracer> {
  const api = await import("@opentelemetry/api");
  const { W3CTraceContextPropagator } = await import("@opentelemetry/core");
  const { B3Propagator } = await import("@opentelemetry/propagator-b3");
  const { resourceFromAttributes } = await import("@opentelemetry/resources");
  const sdk = await import("@opentelemetry/sdk-trace");
  const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-proto");

  api.diag.setLogger(diagLogger(logger), { logLevel: api.DiagLogLevel.WARN, suppressOverrideMessage: true });
  const ratio = new sdk.TraceIdRatioBasedSampler(settings.ratio);
  const root = {
    always_on: new sdk.AlwaysOnSampler(),
    always_off: new sdk.AlwaysOffSampler(),
    traceidratio: ratio,
    parentbased_always_on: new sdk.ParentBasedSampler({ root: new sdk.AlwaysOnSampler() }),
    parentbased_always_off: new sdk.ParentBasedSampler({ root: new sdk.AlwaysOffSampler() }),
    parentbased_traceidratio: new sdk.ParentBasedSampler({ root: ratio }),
  }[settings.sampler];
  const provider = new sdk.TracerProvider({
    resource: resourceFromAttributes(resourceOf(settings)),
    sampler: root,
    // OTEL_BSP_* size the queue (2048 spans by default: spans past it are dropped and logged) and the batches.
    spanProcessors: [
      new sdk.BatchSpanProcessor({
        ...settings.batch,
        exporter: exporter ?? new OTLPTraceExporter({ url: settings.url }),
      }),
    ],
  });
  const tracer = provider.getTracer("portier");
  // Each propagator with the headers that must be present for it to find anything (B3: single or multi).
  const propagators: [TextMapPropagator, readonly string[]][] = [
    [new W3CTraceContextPropagator(), ["traceparent"]],
    [new B3Propagator(), ["b3", "x-b3-traceid"]],
  ];
  logger.info(
    { event: "tracing_on", endpoint: redactUrls(settings.url), sampler: settings.sampler, ratio: settings.ratio },
    "tracing: decision spans exported over OTLP",
  );

  /**
   * The gateway's span as the parent context: the first propagator that finds a valid one, each asked only when
   * one of the headers it reads came (most requests carry W3C's or none: B3's two extractions are skipped).
   */
  function parentOf(headers: TraceHeaders | undefined): Context {
    if (headers === undefined) return api.ROOT_CONTEXT;
    for (const [p, names] of propagators) {
      if (!names.some((name) => headers.has(name))) continue;
      const ctx = p.extract(api.ROOT_CONTEXT, headers, GETTER);
      const sc = api.trace.getSpanContext(ctx);
      if (sc !== undefined && api.isSpanContextValid(sc)) return ctx;
    }
    return api.ROOT_CONTEXT;
  }

  // One options object for every decision span: no attributes at start, since the SDK validates each attribute
  // given (a WeakSet per value, twice for a start attribute) even for a span the sampler then drops; a recorded
  // decision sets them all once at its end (RecordedDecision).
  const decisionOptions = { kind: api.SpanKind.SERVER };
  return {
    start(adapter, headers) {
      const span = tracer.startSpan(DECISION_SPAN, decisionOptions, parentOf(headers));
      const sc = span.spanContext();
      const sampled = span.isRecording();
      const trace = { traceId: sc.traceId, spanId: sc.spanId, sampled };
      if (!sampled) return new UnrecordedDecision(trace, span);
      return new RecordedDecision(
        trace,
        span,
        adapter,
        tracer,
        api.trace.setSpan(api.ROOT_CONTEXT, span),
        api.SpanStatusCode.ERROR,
      );
    },
    async shutdown(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<"late">((resolve) => {
        timer = setTimeout(() => resolve("late"), timeoutMs);
        timer.unref();
      });
      const done = await Promise.race([provider.shutdown().then(() => "done" as const), late]).catch((err: unknown) =>
        String(err),
      );
      clearTimeout(timer);
      if (done !== "done")
        logger.warn({ event: "tracing_problem", detail: done }, "tracing: spans not all exported at stop");
    },
  };
}

/** An unsampled decision: ids for the log line, nothing recorded. */
class UnrecordedDecision implements TracedDecision {
  constructor(
    readonly trace: DecisionTrace,
    private readonly span: Span,
  ) {}
  step(): undefined {
    return undefined;
  }
  end(): void {
    this.span.end();
  }
}

/** A step's span: internal, no attributes (one object for all of them). */
const STEP_OPTIONS = Object.freeze({});

class RecordedDecision implements TracedDecision {
  constructor(
    readonly trace: DecisionTrace,
    private readonly span: Span,
    private readonly adapter: string,
    private readonly tracer: Tracer,
    private readonly context: Context,
    private readonly errorCode: number,
  ) {}
  step(name: StepName): Span {
    return this.tracer.startSpan(name, STEP_OPTIONS, this.context);
  }
  end(f?: DecisionFacts): void {
    // All in one object; the SDK leaves out an attribute whose value is undefined (no route, flow or revision).
    this.span.setAttributes({
      "portier.adapter": this.adapter,
      "portier.decision_id": f?.decisionId,
      "portier.allow": f?.allow,
      "portier.reason": f?.reason,
      "portier.route": f?.route,
      "portier.flow": f?.flow,
      "portier.bundle.revision": f?.revision,
    });
    if (f?.failed) this.span.setStatus({ code: this.errorCode, message: f.reason });
    this.span.end();
  }
}
