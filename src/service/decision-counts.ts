/**
 * The decision metrics as plain counters: the hot path adds to numbers in a map, and the two Prometheus
 * series (portier_decisions_total, portier_decision_duration_seconds) are built from them when scraped, in
 * exactly the shape prom-client's Counter and Histogram give (names, help, labels, buckets, values, order),
 * so that the text answer and the cluster aggregation (--workers N) are the same as with prom-client's
 * increments, which cost several microseconds per decision (label validation and hashing).
 */
import type { Registry } from "prom-client";

const LATENCY = "portier_decision_duration_seconds";
export const DECISION_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5] as const;

type Labels = Record<string, string | number>;
interface Value {
  labels: Labels;
  value: number;
  metricName?: string;
  /** prom-client's bucket values carry `exemplar: null` (without exemplars); kept so the JSON is the same. */
  exemplar?: null;
}
/** What prom-client's Registry reads from a metric: `get()` for the text and for the cluster's aggregation. */
interface ScrapedMetric {
  name: string;
  help: string;
  type: "counter" | "histogram";
  aggregator: "sum";
  get(): Promise<{ name: string; help: string; type: string; values: Value[]; aggregator: string }>;
  reset(): void;
}

interface Series {
  labels: Labels;
  value: number;
}

interface LatencySeries {
  adapter: string;
  /** Observations per bucket (not cumulative); the last slot counts those above the largest bound. */
  buckets: number[];
  sum: number;
  count: number;
}

export class DecisionCounts {
  private readonly decisions = new Map<string, Series>();
  private readonly latency = new Map<string, LatencySeries>();

  constructor(registry: Registry) {
    const register = (name: string, help: string, type: ScrapedMetric["type"], values: () => Value[], reset: () => void): void => {
      const metric: ScrapedMetric = { name, help, type, aggregator: "sum", get: async () => ({ name, help, type, values: values(), aggregator: "sum" }), reset };
      registry.registerMetric(metric as unknown as Parameters<Registry["registerMetric"]>[0]);
    };
    register("portier_decisions_total", "Decisions by result, reason and flow", "counter", () => [...this.decisions.values()].map((s) => ({ value: s.value, labels: s.labels })), () => this.decisions.clear());
    register(LATENCY, "Decision latency (token verify, directory, policy)", "histogram", () => this.latencyValues(), () => this.latency.clear());
  }

  /** One decision: counted by result, reason, flow and adapter; its latency observed per adapter. */
  count(allow: boolean, reason: string, flow: string, adapter: string, seconds: number): void {
    const key = `${allow}\u0000${reason}\u0000${flow}\u0000${adapter}`;
    const series = this.decisions.get(key);
    if (series) series.value += 1;
    else this.decisions.set(key, { labels: { allow: String(allow), reason, flow, adapter }, value: 1 });
    let l = this.latency.get(adapter);
    if (!l) this.latency.set(adapter, (l = { adapter, buckets: new Array<number>(DECISION_BUCKETS.length + 1).fill(0), sum: 0, count: 0 }));
    let i = 0;
    while (i < DECISION_BUCKETS.length && seconds > DECISION_BUCKETS[i]!) i++;
    l.buckets[i]! += 1;
    l.sum += seconds;
    l.count += 1;
  }

  /** prom-client's Histogram values: cumulative buckets (le first, then the labels), +Inf, sum, count. */
  private latencyValues(): Value[] {
    const name = LATENCY;
    const out: Value[] = [];
    for (const l of this.latency.values()) {
      let acc = 0;
      DECISION_BUCKETS.forEach((bound, i) => {
        acc += l.buckets[i]!;
        out.push({ labels: { le: bound, adapter: l.adapter }, value: acc, metricName: `${name}_bucket`, exemplar: null });
      });
      out.push({ labels: { le: "+Inf", adapter: l.adapter }, value: l.count, metricName: `${name}_bucket`, exemplar: null });
      out.push({ labels: { adapter: l.adapter }, value: l.sum, metricName: `${name}_sum` });
      out.push({ labels: { adapter: l.adapter }, value: l.count, metricName: `${name}_count` });
    }
    return out;
  }
}
