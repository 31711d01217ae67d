/**
 * Prometheus metrics (prom-client), one registry per service instance.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

export interface ServiceMetrics {
  registry: Registry;
  decisions: Counter<"allow" | "reason" | "flow" | "adapter">;
  latency: Histogram<"adapter">;
}

export function createMetrics(sources: {
  keys: () => { refreshes: number; refreshFailures: number; ready: boolean; lastError?: string };
  policy: () => { revision?: string; loaded: boolean; reloadFailures: number; lastError?: string };
  directory: () => { size: number; reloadFailures: number; lastError?: string } | undefined;
  log?: () => { droppedLines: number; bufferedBytes: number };
}): ServiceMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const decisions = new Counter({ name: "portier_decisions_total", help: "Decisions by result, reason and flow", labelNames: ["allow", "reason", "flow", "adapter"] as const, registers: [registry] });
  const latency = new Histogram({
    name: "portier_decision_duration_seconds",
    help: "Decision latency (token verify, directory, policy)",
    labelNames: ["adapter"] as const,
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5],
    registers: [registry],
  });
  new Gauge({ name: "portier_key_refreshes_total", help: "Issuer key refreshes", registers: [registry], collect() { this.set(sources.keys().refreshes); } });
  new Gauge({ name: "portier_key_refresh_failures_total", help: "Issuer key refresh failures", registers: [registry], collect() { this.set(sources.keys().refreshFailures); } });
  new Gauge({ name: "portier_keys_last_refresh_failed", help: "1 until a key refresh succeeds after a failed one", registers: [registry], collect() { this.set(sources.keys().lastError ? 1 : 0); } });
  new Gauge({ name: "portier_keys_ready", help: "1 when issuer keys are loaded", registers: [registry], collect() { this.set(sources.keys().ready ? 1 : 0); } });
  new Gauge({
    name: "portier_policy_revision_info",
    help: "Policy revision currently serving (value 1)",
    labelNames: ["revision"] as const,
    registers: [registry],
    collect() {
      this.reset();
      const p = sources.policy();
      if (p.revision) this.set({ revision: p.revision }, 1);
    },
  });
  new Gauge({ name: "portier_policy_reload_failures_total", help: "Refused policy bundles", registers: [registry], collect() { this.set(sources.policy().reloadFailures); } });
  new Gauge({ name: "portier_policy_last_load_failed", help: "1 when the last bundle load or poll failed (cleared by the next success, a 304 included)", registers: [registry], collect() { this.set(sources.policy().lastError ? 1 : 0); } });
  new Gauge({ name: "portier_directory_size", help: "Synced users in the directory", registers: [registry], collect() { this.set(sources.directory()?.size ?? 0); } });
  new Gauge({ name: "portier_directory_last_load_failed", help: "1 when the last directory reload was refused", registers: [registry], collect() { this.set(sources.directory()?.lastError ? 1 : 0); } });
  new Gauge({ name: "portier_directory_reload_failures_total", help: "Refused directory reloads", registers: [registry], collect() { this.set(sources.directory()?.reloadFailures ?? 0); } });
  const log = sources.log;
  if (log) {
    new Counter({ name: "portier_log_lines_dropped_total", help: "Log lines dropped because stdout was not drained and the log buffer was full", registers: [registry], collect() { this.reset(); this.inc(log().droppedLines); } });
    new Gauge({ name: "portier_log_buffer_bytes", help: "Log bytes waiting for stdout (capped by --log-buffer-bytes)", registers: [registry], collect() { this.set(log().bufferedBytes); } });
  }
  return { registry, decisions, latency };
}
