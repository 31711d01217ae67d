/**
 * Prometheus metrics (prom-client), one registry per service instance. `*_total` series are counters; with
 * --workers N a scrape answers for the whole service (cluster-metrics.ts), each metric aggregated its own way.
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from "prom-client";
import { DecisionCounts } from "./decision-counts.js";

export interface ServiceMetrics {
  registry: Registry;
  /** portier_decisions_total and portier_decision_duration_seconds. */
  decisions: DecisionCounts;
}

export function createMetrics(sources: {
  keys: () => { refreshes: number; refreshFailures: number; ready: boolean; lastError?: string };
  policy: () => { revision?: string; loaded: boolean; reloadFailures: number; lastError?: string };
  directory: () => { size: number; reloadFailures: number; lastError?: string; rolesUnresolved?: number } | undefined;
  log?: () => { droppedLines: number; bufferedBytes: number };
  /** The decision memo's lookups in this process, over every bundle revision it served. */
  memo?: () => { hits: number; misses: number };
}): ServiceMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const decisions = new DecisionCounts(registry);
  // A count the service keeps elsewhere (a status field), exposed as a counter: Prometheus' rate() needs the type.
  const counter = (name: string, help: string, value: () => number) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(value());
      },
    });
  // Across workers (--workers N) counters and histograms add up; a status gauge takes the worst worker's value.
  const gauge = (name: string, help: string, aggregator: "min" | "max", value: () => number) =>
    new Gauge({
      name,
      help,
      aggregator,
      registers: [registry],
      collect() {
        this.set(value());
      },
    });
  counter("portier_key_refreshes_total", "Issuer key refreshes", () => sources.keys().refreshes);
  counter("portier_key_refresh_failures_total", "Issuer key refresh failures", () => sources.keys().refreshFailures);
  gauge("portier_keys_last_refresh_failed", "1 until a key refresh succeeds after a failed one", "max", () =>
    sources.keys().lastError ? 1 : 0,
  );
  gauge("portier_keys_ready", "1 when issuer keys are loaded", "min", () => (sources.keys().ready ? 1 : 0));
  new Gauge({
    name: "portier_policy_revision_info",
    help: "Policy revision currently serving (value 1)",
    labelNames: ["revision"] as const,
    aggregator: "max",
    registers: [registry],
    collect() {
      this.reset();
      const p = sources.policy();
      if (p.revision) this.set({ revision: p.revision }, 1);
    },
  });
  counter("portier_policy_reload_failures_total", "Refused policy bundles", () => sources.policy().reloadFailures);
  gauge(
    "portier_policy_last_load_failed",
    "1 when the last bundle load or poll failed (cleared by the next success, a 304 included)",
    "max",
    () => (sources.policy().lastError ? 1 : 0),
  );
  gauge("portier_directory_size", "Synced users in the directory", "min", () => sources.directory()?.size ?? 0);
  gauge(
    "portier_directory_roles_unresolved",
    "Directory records naming a role the live bundle does not know (those users are not synced)",
    "max",
    () => sources.directory()?.rolesUnresolved ?? 0,
  );
  gauge("portier_directory_last_load_failed", "1 when the last directory reload was refused", "max", () =>
    sources.directory()?.lastError ? 1 : 0,
  );
  counter(
    "portier_directory_reload_failures_total",
    "Refused directory reloads",
    () => sources.directory()?.reloadFailures ?? 0,
  );
  const memo = sources.memo;
  if (memo) {
    counter("portier_decision_memo_hits_total", "Decisions answered from the decision memo", () => memo().hits);
    counter(
      "portier_decision_memo_misses_total",
      "Decisions the memo did not hold (evaluated by the policy)",
      () => memo().misses,
    );
  }
  const log = sources.log;
  if (log) {
    counter(
      "portier_log_lines_dropped_total",
      "Log lines dropped because stdout was not drained and the log buffer was full",
      () => log().droppedLines,
    );
    new Gauge({
      name: "portier_log_buffer_bytes",
      help: "Log bytes waiting for stdout (capped by --log-buffer-bytes)",
      registers: [registry],
      collect() {
        this.set(log().bufferedBytes);
      },
    });
  }
  return { registry, decisions };
}
