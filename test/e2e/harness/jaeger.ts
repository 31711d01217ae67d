/**
 * Jaeger all-in-one (the pinned build of tools/ensure-jaeger.sh in .tools/bin) for the tracing end-to-end
 * tests: a test-only config (memory storage, OTLP/HTTP in, the query API out, nothing else) with every port on
 * 127.0.0.1 and free, and what the tests read back through Jaeger's query API (GET /api/traces/{traceID}).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PROJECT_ROOT } from "../../service/helpers.js";
import { freePort, LOOPBACK, waitForPort } from "./net.js";
import { startProcess } from "./process.js";

export const JAEGER_BIN = join(PROJECT_ROOT, ".tools", "bin", "jaeger");
export const jaegerMissing = (): boolean => !existsSync(JAEGER_BIN);

export interface RunningJaeger {
  /** The OTLP/HTTP base endpoint (OTEL_EXPORTER_OTLP_ENDPOINT). */
  otlpEndpoint: string;
  /** The query API's base URL. */
  queryUrl: string;
  logs(): string;
  stop(): Promise<void>;
}

/** A span as Jaeger's query API returns it (the fields the tests read). */
export interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  references: { refType: string; traceID: string; spanID: string }[];
  tags: { key: string; type: string; value: unknown }[];
  processID: string;
}

function config(otlp: number, query: number, queryGrpc: number): string {
  return `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    enable_tracing: false
    storage:
      traces: memstore
    http:
      endpoint: ${LOOPBACK}:${query}
    grpc:
      endpoint: ${LOOPBACK}:${queryGrpc}
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 10000
receivers:
  otlp:
    protocols:
      http:
        endpoint: ${LOOPBACK}:${otlp}
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`;
}

export async function startJaeger(timeoutMs = 60_000): Promise<RunningJaeger> {
  const dir = mkdtempSync(join(tmpdir(), "portier-e2e-jaeger-"));
  const [otlp, query, queryGrpc] = [await freePort(), await freePort(), await freePort()];
  const file = join(dir, "jaeger.yaml");
  writeFileSync(file, config(otlp, query, queryGrpc));
  const proc = startProcess("jaeger", JAEGER_BIN, ["--config", `file:${file}`], { cwd: dir });
  const stop = async () => {
    await proc.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const port of [otlp, query])
      await waitForPort(port, { timeoutMs, what: "jaeger", failed: () => proc.exited() });
  } catch (err) {
    const out = proc.output();
    await stop();
    throw new Error(`${(err as Error).message}\n${out.slice(-4000)}`);
  }
  return {
    otlpEndpoint: `http://${LOOPBACK}:${otlp}`,
    queryUrl: `http://${LOOPBACK}:${query}`,
    logs: () => proc.output(),
    stop,
  };
}

/** The spans of a trace Jaeger holds (none while it holds nothing of it). */
export async function traceSpans(jaeger: RunningJaeger, traceId: string): Promise<JaegerSpan[]> {
  const res = await fetch(`${jaeger.queryUrl}/api/traces/${traceId}`);
  if (res.status === 404) return [];
  if (!res.ok) throw new Error(`jaeger query: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { data?: { spans: JaegerSpan[] }[] };
  return body.data?.[0]?.spans ?? [];
}

/** The process (resource) of each span of a trace: its service name and its tags as a plain object. */
export async function traceProcesses(
  jaeger: RunningJaeger,
  traceId: string,
): Promise<Record<string, { serviceName: string; tags: Record<string, unknown> }>> {
  const res = await fetch(`${jaeger.queryUrl}/api/traces/${traceId}`);
  if (!res.ok) throw new Error(`jaeger query: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as {
    data?: { processes: Record<string, { serviceName: string; tags: { key: string; value: unknown }[] }> }[];
  };
  const processes = body.data?.[0]?.processes ?? {};
  return Object.fromEntries(
    Object.entries(processes).map(([id, p]) => [
      id,
      { serviceName: p.serviceName, tags: Object.fromEntries(p.tags.map((t) => [t.key, t.value])) },
    ]),
  );
}

/** A span's tags as a plain object. */
export function tagsOf(span: JaegerSpan): Record<string, unknown> {
  return Object.fromEntries(span.tags.map((t) => [t.key, t.value]));
}
