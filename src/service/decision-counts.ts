/**
 * The decision metrics, prom-client's Counter and Histogram: portier_decisions_total by result, reason, flow
 * and adapter, portier_decision_duration_seconds per adapter, and portier_requests_rejected_total: the
 * requests answered before any decision (unreadable, forged or too large), by adapter and reason. With
 * --workers N the cluster's scrape adds them up (prom-client's AggregatorRegistry, "sum").
 */
import { Counter, Histogram, type Registry } from "prom-client";

// From 0.1 ms to 5 s: a slow decision (a key fetch on an unknown kid, a loaded machine) lands in a bucket of its
// own instead of +Inf, so a latency objective up to a gateway's time-out can be read off the histogram.
export const DECISION_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
] as const;

export class DecisionCounts {
  private readonly decisions: Counter<"allow" | "reason" | "flow" | "adapter">;
  private readonly latency: Histogram<"adapter">;
  private readonly rejected: Counter<"adapter" | "reason">;

  constructor(registry: Registry) {
    this.decisions = new Counter({
      name: "portier_decisions_total",
      help: "Decisions by result, reason and flow",
      labelNames: ["allow", "reason", "flow", "adapter"] as const,
      registers: [registry],
    });
    this.latency = new Histogram({
      name: "portier_decision_duration_seconds",
      help: "Decision latency (token verify, directory, policy)",
      labelNames: ["adapter"] as const,
      buckets: [...DECISION_BUCKETS],
      registers: [registry],
    });
    this.rejected = new Counter({
      name: "portier_requests_rejected_total",
      help: "Requests answered before any decision (unreadable, forged gateway headers, too large, too slow)",
      labelNames: ["adapter", "reason"] as const,
      registers: [registry],
    });
  }

  /** One decision: counted by result, reason, flow and adapter; its latency observed per adapter. */
  count(allow: boolean, reason: string, flow: string, adapter: string, seconds: number): void {
    this.decisions.inc({ allow: allow ? "true" : "false", reason, flow, adapter });
    this.latency.observe({ adapter }, seconds);
  }

  /** One request answered before any decision, by adapter and reason. */
  reject(adapter: string, reason: string): void {
    this.rejected.inc({ adapter, reason });
  }
}
