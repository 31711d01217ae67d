/**
 * Tracing is read from the standard OTEL_* variables: off unless an OTLP endpoint is set (or explicitly off),
 * the base endpoint takes /v1/traces, and every variable Portier acts on is checked, a bad one refused by name.
 */
import { describe, expect, it } from "vitest";
import { readTracingEnv, TracingConfigError } from "../../../src/service/tracing/tracing-env.js";

const BASE = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" };

function refusal(env: Record<string, string>): string {
  try {
    readTracingEnv(env);
  } catch (err) {
    expect(err).toBeInstanceOf(TracingConfigError);
    return (err as Error).message;
  }
  throw new Error("not refused");
}

describe("readTracingEnv", () => {
  it("is off without an endpoint, with OTEL_SDK_DISABLED=true and with OTEL_TRACES_EXPORTER=none", () => {
    expect(readTracingEnv({})).toBeUndefined();
    expect(readTracingEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "  " })).toBeUndefined();
    expect(readTracingEnv({ ...BASE, OTEL_SDK_DISABLED: "true" })).toBeUndefined();
    expect(readTracingEnv({ ...BASE, OTEL_TRACES_EXPORTER: "none" })).toBeUndefined();
  });

  it("defaults to parentbased_always_on, service portier, the base endpoint with /v1/traces", () => {
    expect(readTracingEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318/" })).toEqual({
      url: "http://127.0.0.1:4318/v1/traces",
      serviceName: "portier",
      sampler: "parentbased_always_on",
      ratio: 1,
      resourceAttributes: {},
      batch: {},
    });
  });

  it("takes the traces endpoint as is, the service name and the sampler with its ratio", () => {
    expect(
      readTracingEnv({
        ...BASE,
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://collector.example/otlp/traces",
        OTEL_SERVICE_NAME: "portier-eu",
        OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
        OTEL_TRACES_SAMPLER_ARG: "0.25",
      }),
    ).toEqual({
      url: "https://collector.example/otlp/traces",
      serviceName: "portier-eu",
      sampler: "parentbased_traceidratio",
      ratio: 0.25,
      resourceAttributes: {},
      batch: {},
    });
  });

  it.each([
    ["a=1", {}, { a: "1" }, "portier"],
    [
      "deployment.environment.name=prod, team=platform%20ops%2Cid",
      {},
      { "deployment.environment.name": "prod", team: "platform ops,id" },
      "portier",
    ],
    ["service.name=from-attributes,x=y=z", {}, { "service.name": "from-attributes", x: "y=z" }, "from-attributes"],
    [
      "service.name=from-attributes",
      { OTEL_SERVICE_NAME: "from-name" },
      { "service.name": "from-attributes" },
      "from-name",
    ],
  ])("OTEL_RESOURCE_ATTRIBUTES=%s gives its attributes and the service name", (attrs, more, expected, name) => {
    const s = readTracingEnv({ ...BASE, OTEL_RESOURCE_ATTRIBUTES: attrs, ...more });
    expect(s?.resourceAttributes).toEqual(expected);
    expect(s?.serviceName).toBe(name);
  });

  it.each(["novalue", "=x", "a=1,,b=2", "a=%zz"])("OTEL_RESOURCE_ATTRIBUTES=%s is refused by name", (attrs) => {
    expect(refusal({ ...BASE, OTEL_RESOURCE_ATTRIBUTES: attrs })).toMatch(
      /^OTEL_RESOURCE_ATTRIBUTES: ".*" is not key=value/,
    );
  });

  it("reads the export queue's OTEL_BSP_* settings, and refuses what is not a whole number by name", () => {
    const batch = {
      OTEL_BSP_MAX_QUEUE_SIZE: "4096",
      OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "256",
      OTEL_BSP_SCHEDULE_DELAY: "0",
      OTEL_BSP_EXPORT_TIMEOUT: "10000",
    };
    expect(readTracingEnv({ ...BASE, ...batch })?.batch).toEqual({
      maxQueueSize: 4096,
      maxExportBatchSize: 256,
      scheduledDelayMillis: 0,
      exportTimeoutMillis: 10000,
    });
    expect(refusal({ ...BASE, OTEL_BSP_SCHEDULE_DELAY: "5s" })).toMatch(/^OTEL_BSP_SCHEDULE_DELAY="5s": not a whole/);
    expect(refusal({ ...BASE, OTEL_BSP_MAX_QUEUE_SIZE: "0" })).toMatch(/^OTEL_BSP_MAX_QUEUE_SIZE="0"/);
    expect(refusal({ ...BASE, OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "4096" })).toMatch(/must not exceed/);
  });

  it("refuses, by name, what it cannot act on", () => {
    expect(refusal({ OTEL_EXPORTER_OTLP_ENDPOINT: "127.0.0.1:4318" })).toMatch(
      /^OTEL_EXPORTER_OTLP_ENDPOINT: not an http/,
    );
    expect(refusal({ ...BASE, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "grpc://x" })).toMatch(
      /^OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: not an http/,
    );
    expect(refusal({ ...BASE, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })).toMatch(/set http\/protobuf/);
    expect(refusal({ ...BASE, OTEL_TRACES_EXPORTER: "zipkin" })).toMatch(/^OTEL_TRACES_EXPORTER="zipkin"/);
    expect(refusal({ ...BASE, OTEL_TRACES_SAMPLER: "always-on" })).toMatch(/use one of always_on, always_off/);
    expect(refusal({ ...BASE, OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "1.5" })).toMatch(
      /^OTEL_TRACES_SAMPLER_ARG="1.5"/,
    );
    expect(refusal({ ...BASE, OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "half" })).toMatch(
      /from 0 to 1/,
    );
  });

  it("ignores the ratio of a sampler that has none", () => {
    expect(readTracingEnv({ ...BASE, OTEL_TRACES_SAMPLER: "always_on", OTEL_TRACES_SAMPLER_ARG: "x" })?.sampler).toBe(
      "always_on",
    );
  });
});
