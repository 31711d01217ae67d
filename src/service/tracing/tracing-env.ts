/**
 * Whether `portier serve` traces, read from the standard OpenTelemetry environment variables: off (nothing of
 * the SDK loaded) unless an OTLP endpoint is set, and every variable Portier acts on checked at start, so that
 * a typo is a start-up failure naming the variable instead of a silent fallback. OTEL_SERVICE_NAME and
 * OTEL_RESOURCE_ATTRIBUTES name the resource the spans carry. Headers, timeouts,
 * compression and certificates (OTEL_EXPORTER_OTLP_HEADERS, ..._TIMEOUT, ...) are read by the OTLP exporter.
 */
import { PortierError } from "../../errors/portier-error.js";

/** An OTEL_* variable Portier cannot act on: the message names it and what to set. */
export class TracingConfigError extends PortierError {
  static override readonly code = "tracing_config";
}

export type SamplerName =
  | "always_on"
  | "always_off"
  | "traceidratio"
  | "parentbased_always_on"
  | "parentbased_always_off"
  | "parentbased_traceidratio";

const SAMPLERS: readonly SamplerName[] = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
];

export interface TracingSettings {
  /** Where spans are sent: OTLP over HTTP, protobuf-encoded (the full URL, /v1/traces included). */
  url: string;
  serviceName: string;
  sampler: SamplerName;
  /** The ratio of the traceidratio samplers (OTEL_TRACES_SAMPLER_ARG, default 1). */
  ratio: number;
  /** OTEL_RESOURCE_ATTRIBUTES, decoded (service.name is serviceName's). */
  resourceAttributes: Record<string, string>;
  /** The export queue and its batches (OTEL_BSP_*; the SDK's defaults where unset). */
  batch: BatchSettings;
}

/**
 * OTEL_RESOURCE_ATTRIBUTES: comma-separated key=value pairs, each value percent-encoded (OpenTelemetry's
 * resource SDK specification); an entry that is not key=value, or a value that does not decode, names itself.
 */
function resourceAttributes(env: Env): Record<string, string> {
  const raw = value(env, "OTEL_RESOURCE_ATTRIBUTES");
  const out: Record<string, string> = {};
  if (raw === undefined) return out;
  for (const entry of raw.split(",")) {
    const eq = entry.indexOf("=");
    const key = entry.slice(0, eq).trim();
    let decoded: string | undefined;
    try {
      decoded = eq > 0 ? decodeURIComponent(entry.slice(eq + 1).trim()) : undefined;
    } catch {
      decoded = undefined;
    }
    if (!key || decoded === undefined)
      throw new TracingConfigError(
        `OTEL_RESOURCE_ATTRIBUTES: "${entry.trim().slice(0, 80)}" is not key=value (percent-encode "," "=" and ` +
          `spaces in a value), e.g. deployment.environment.name=prod,service.namespace=platform`,
      );
    out[key] = decoded;
  }
  return out;
}

/** OTEL_BSP_*, the batch span processor's settings of the OpenTelemetry environment specification. */
export interface BatchSettings {
  maxQueueSize?: number;
  maxExportBatchSize?: number;
  scheduledDelayMillis?: number;
  exportTimeoutMillis?: number;
}

const BATCH_VARIABLES: readonly [string, keyof BatchSettings][] = [
  ["OTEL_BSP_MAX_QUEUE_SIZE", "maxQueueSize"],
  ["OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "maxExportBatchSize"],
  ["OTEL_BSP_SCHEDULE_DELAY", "scheduledDelayMillis"],
  ["OTEL_BSP_EXPORT_TIMEOUT", "exportTimeoutMillis"],
];

/** Each OTEL_BSP_* that is set, as a whole number (milliseconds for the delay and the timeout). */
function batchSettings(env: Env): BatchSettings {
  const batch: BatchSettings = {};
  for (const [name, field] of BATCH_VARIABLES) {
    const raw = value(env, name);
    if (raw === undefined) continue;
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n < (field === "scheduledDelayMillis" ? 0 : 1))
      throw new TracingConfigError(`${name}="${raw}": not a whole number of ${/MILLIS/i.test(field) ? "ms" : "spans"}`);
    batch[field] = n;
  }
  if ((batch.maxExportBatchSize ?? 512) > (batch.maxQueueSize ?? 2048))
    throw new TracingConfigError(
      `OTEL_BSP_MAX_EXPORT_BATCH_SIZE must not exceed OTEL_BSP_MAX_QUEUE_SIZE (defaults 512 and 2048)`,
    );
  return batch;
}

type Env = Readonly<Record<string, string | undefined>>;

function value(env: Env, name: string): string | undefined {
  const v = env[name]?.trim();
  return v === "" ? undefined : v;
}

function endpoint(env: Env): { url: string; variable: string } | undefined {
  const traces = value(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  if (traces !== undefined) return { url: traces, variable: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" };
  const base = value(env, "OTEL_EXPORTER_OTLP_ENDPOINT");
  // The base endpoint takes the signal's path (OTLP exporter specification).
  if (base !== undefined)
    return { url: `${base.replace(/\/+$/, "")}/v1/traces`, variable: "OTEL_EXPORTER_OTLP_ENDPOINT" };
  return undefined;
}

/** The tracing settings, undefined when tracing is off; throws TracingConfigError naming a bad variable. */
export function readTracingEnv(env: Env): TracingSettings | undefined {
  if (value(env, "OTEL_SDK_DISABLED")?.toLowerCase() === "true") return undefined;
  const exporter = value(env, "OTEL_TRACES_EXPORTER")?.toLowerCase() ?? "otlp";
  if (exporter === "none") return undefined;
  if (exporter !== "otlp")
    throw new TracingConfigError(
      `OTEL_TRACES_EXPORTER="${exporter}": Portier exports traces with "otlp" only (or "none")`,
    );
  const where = endpoint(env);
  if (where === undefined) return undefined;
  let parsed: URL | undefined;
  try {
    parsed = new URL(where.url);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || (parsed.protocol !== "http:" && parsed.protocol !== "https:"))
    throw new TracingConfigError(
      `${where.variable}: not an http(s) URL; set the collector's OTLP/HTTP address, e.g. http://127.0.0.1:4318`,
    );
  const protocol =
    value(env, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") ?? value(env, "OTEL_EXPORTER_OTLP_PROTOCOL") ?? "http/protobuf";
  if (protocol !== "http/protobuf")
    throw new TracingConfigError(
      `OTEL_EXPORTER_OTLP_PROTOCOL="${protocol}": Portier exports OTLP over HTTP with protobuf; set ` +
        `http/protobuf (or leave it unset) and the collector's OTLP/HTTP port (4318)`,
    );
  const sampler = (value(env, "OTEL_TRACES_SAMPLER")?.toLowerCase() ?? "parentbased_always_on") as SamplerName;
  if (!SAMPLERS.includes(sampler))
    throw new TracingConfigError(`OTEL_TRACES_SAMPLER="${sampler}": not a sampler; use one of ${SAMPLERS.join(", ")}`);
  const arg = value(env, "OTEL_TRACES_SAMPLER_ARG");
  const ratio = arg === undefined ? 1 : Number(arg);
  if (sampler.endsWith("traceidratio") && !(ratio >= 0 && ratio <= 1))
    throw new TracingConfigError(
      `OTEL_TRACES_SAMPLER_ARG="${arg}": the ratio of ${sampler} must be a number from 0 to 1`,
    );
  const attributes = resourceAttributes(env);
  // OTEL_SERVICE_NAME wins over a service.name in OTEL_RESOURCE_ATTRIBUTES (the specification's order).
  const serviceName = value(env, "OTEL_SERVICE_NAME") ?? attributes["service.name"] ?? "portier";
  const batch = batchSettings(env);
  return { url: where.url, serviceName, sampler, ratio, resourceAttributes: attributes, batch };
}
