/**
 * Tracing of decisions: off (nothing of the OpenTelemetry SDK loaded) unless an OTLP endpoint is set in the
 * OTEL_* environment; `given` replaces it (tests: a tracer with an exporter of their own). It closes with the
 * sinks: the spans still queued are exported within what is left of the stop, at least a second.
 */
import type { Logger } from "pino";
import type { Part } from "../part-stack.js";
import { startDecisionTracer, type DecisionTracer } from "../tracing/decision-tracer.js";
import type { TracingSettings } from "../tracing/tracing-env.js";

export async function decisionTracing(
  given: DecisionTracer | undefined,
  settings: TracingSettings | undefined,
  logger: Logger,
): Promise<Part<DecisionTracer | undefined>> {
  const tracer = given ?? (settings ? await startDecisionTracer(settings, logger) : undefined);
  return {
    value: tracer,
    close: tracer && { sinks: ({ deadline }) => tracer.shutdown(Math.max(1000, deadline - Date.now())) },
  };
}
