/**
 * Metrics of the whole service when --workers N processes share the port: a scrape lands on one worker,
 * which asks the primary over the cluster's IPC channel; the primary gathers every worker's registry with
 * prom-client's AggregatorRegistry (counters and histograms summed, status gauges by their own aggregator)
 * and answers. Without a cluster, the worker's own registry is the service's.
 */
import cluster from "node:cluster";
import { AggregatorRegistry, Registry, type PrometheusContentType } from "prom-client";
import { sendToWorker, type WorkerChannel } from "./worker-channel.js";

const REQUEST = "portier:metrics-request";
const ANSWER = "portier:metrics-answer";
const TIMEOUT_MS = 5000;

type Request = { portier: typeof REQUEST; id: number };
type Answer = { portier: typeof ANSWER; id: number; text?: string; error?: string };

let nextId = 0;
const waiting = new Map<number, { resolve(text: string): void; reject(err: Error): void; timer: NodeJS.Timeout }>();

if (cluster.isWorker) {
  process.on("message", (m: Answer) => {
    if (m?.portier !== ANSWER) return;
    const w = waiting.get(m.id);
    if (!w) return;
    waiting.delete(m.id);
    clearTimeout(w.timer);
    if (m.text !== undefined) w.resolve(m.text);
    else w.reject(new Error(m.error ?? "the primary gave no metrics"));
  });
}

/** In a worker: tells prom-client which registry answers the primary's collection requests. */
export function shareWorkerRegistry(registry: Registry): void {
  if (!cluster.isWorker) return;
  // Constructing one installs prom-client's listener that answers the primary's collection requests.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
}

/** The metrics text for a scrape: the whole cluster's from a worker, the registry's own otherwise. */
export function serviceMetrics(registry: Registry): Promise<string> {
  if (!cluster.isWorker || !process.send) return registry.metrics();
  return new Promise<string>((resolve, reject) => {
    const id = ++nextId;
    const timer = setTimeout(() => {
      waiting.delete(id);
      reject(new Error(`the primary did not answer within ${TIMEOUT_MS} ms`));
    }, TIMEOUT_MS);
    timer.unref();
    waiting.set(id, { resolve, reject, timer });
    process.send!({ portier: REQUEST, id } satisfies Request);
  });
}

/** The Content-Type of the text serviceMetrics() returns. */
export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

/** The part of a cluster Worker the primary's answers use. */
export interface ScrapingWorker extends WorkerChannel {
  on(event: "message", l: (m: Request) => void): unknown;
}

/**
 * In the primary: answers workers' scrape requests with the aggregated metrics of every worker. A worker may
 * exit while the aggregation waits for the others: its answer is then dropped (worker-channel.ts), never a send
 * that throws inside the promise (an unhandled rejection would end the primary).
 */
export function answerMetricsRequests(
  worker: ScrapingWorker,
  aggregator: Pick<AggregatorRegistry<PrometheusContentType>, "clusterMetrics">,
): void {
  const reply = (answer: Answer): void => void sendToWorker(worker, answer);
  worker.on("message", (m) => {
    if (m?.portier !== REQUEST) return;
    aggregator.clusterMetrics().then(
      (text: string) => reply({ portier: ANSWER, id: m.id, text }),
      (err: Error) => reply({ portier: ANSWER, id: m.id, error: err.message }),
    );
  });
}
