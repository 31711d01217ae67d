/**
 * The decision-log pipeline's Prometheus metrics, read from its counts at scrape time. With --workers N each
 * worker ships its own events and the scrape adds the workers' series up (cluster-metrics.ts).
 */
import { Counter, Gauge, type Registry } from "prom-client";
import { DROP_REASONS, UPLOAD_RESULTS, type DecisionLogStats } from "./stats.js";

export function registerDecisionLogMetrics(registry: Registry, stats: DecisionLogStats, bufferLimit: number): void {
  const registers = [registry];
  new Counter({
    name: "portier_decision_logs_dropped_total",
    help:
      "Decision log events accepted and not delivered, by reason " +
      "(buffer_full, malformed, too_large, rule_error, shutdown)",
    labelNames: ["reason"] as const,
    registers,
    collect() {
      this.reset();
      for (const r of DROP_REASONS) this.inc({ reason: r }, stats.dropped[r]);
    },
  });
  new Counter({
    name: "portier_decision_logs_rule_dropped_total",
    help: "Decision log events the bundle's drop rule left out on purpose",
    registers,
    collect() {
      this.reset();
      this.inc(stats.ruleDropped);
    },
  });
  new Counter({
    name: "portier_decision_logs_uploads_total",
    help: "Uploads to the collector, by result (ok, failed: kept and retried, malformed: dropped, too_large: split)",
    labelNames: ["result"] as const,
    registers,
    collect() {
      this.reset();
      for (const r of UPLOAD_RESULTS) this.inc({ result: r }, stats.uploads[r]);
    },
  });
  const counter = (name: string, help: string, value: () => number) =>
    new Counter({
      name,
      help,
      registers,
      collect() {
        this.reset();
        this.inc(value());
      },
    });
  new Gauge({
    name: "portier_decision_logs_last_success_timestamp_seconds",
    help: "Unix time the collector last accepted an upload (0 before the first); the latest worker's across workers",
    aggregator: "max",
    registers,
    collect() {
      this.set(stats.lastUploadOkMs / 1000);
    },
  });
  counter("portier_decision_logs_retries_total", "Uploads of a batch that had failed before", () => stats.retries);
  counter("portier_decision_logs_sent_bytes_total", "Compressed bytes the collector accepted", () => stats.sentBytes);
  counter("portier_decision_logs_sent_events_total", "Events the collector accepted", () => stats.sentEvents);
  new Gauge({
    name: "portier_decision_logs_buffer_bytes",
    help: "Event bytes waiting for the collector (capped by --decision-log-buffer-bytes)",
    registers,
    collect() {
      this.set(stats.bufferedBytes);
    },
  });
  new Gauge({
    name: "portier_decision_logs_buffer_events",
    help: "Events waiting for the collector",
    registers,
    collect() {
      this.set(stats.bufferedEvents);
    },
  });
  new Gauge({
    name: "portier_decision_logs_buffer_limit_bytes",
    help: "The buffer's cap (--decision-log-buffer-bytes); fill = buffer_bytes / buffer_limit_bytes",
    registers,
    collect() {
      this.set(bufferLimit);
    },
  });
}
