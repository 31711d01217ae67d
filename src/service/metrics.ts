/**
 * Prometheus metrics (prom-client), one registry per service instance. `*_total` series are counters; with
 * --workers N a scrape answers for the whole service (cluster-metrics.ts), each metric aggregated its own way.
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from "prom-client";
import { DecisionCounts } from "./decision-counts.js";
import { buildInfo } from "./build-info.js";

/** The help text of a series kept under its old name for one release. */
const DEPRECATED = "Deprecated (removed in the next release), use";

/** What a reloaded input's status says about its successes (src/reload/status.ts). */
interface ReloadCounts {
  successfulRequests?: number;
  lastSuccessfulRequest?: string;
}

const seconds = (iso: string | undefined): number => (iso === undefined ? 0 : Date.parse(iso) / 1000);
const successes = (s: (ReloadCounts & { refreshes?: number }) | undefined): number =>
  s?.successfulRequests ?? s?.refreshes ?? 0;
const failures = (s: { reloadFailures?: number; refreshFailures: number }): number =>
  s.reloadFailures ?? s.refreshFailures;

export interface ServiceMetrics {
  registry: Registry;
  /** portier_decisions_total and portier_decision_duration_seconds. */
  decisions: DecisionCounts;
}

/** A count the service keeps elsewhere (a status field), exposed as a counter: Prometheus' rate() needs the type. */
export function statusCounter(registry: Registry, name: string, help: string, value: () => number): Counter {
  return new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(value());
    },
  });
}

/** A status value as a gauge; across workers (--workers N) it takes the worst worker's value (`aggregator`). */
export function statusGauge(
  registry: Registry,
  name: string,
  help: string,
  aggregator: "min" | "max",
  value: () => number,
): Gauge {
  return new Gauge({
    name,
    help,
    aggregator,
    registers: [registry],
    collect() {
      this.set(value());
    },
  });
}

export function createMetrics(sources: {
  keys: () => ReloadCounts & {
    reloadFailures?: number;
    refreshes: number;
    refreshFailures: number;
    ready: boolean;
    lastError?: string;
  };
  policy: () => ReloadCounts & { reloadFailures: number; revision?: string; loaded: boolean; lastError?: string };
  directory: () =>
    (ReloadCounts & { reloadFailures: number; size: number; lastError?: string; rolesUnresolved?: number }) | undefined;
  log?: () => { droppedLines: number; bufferedBytes: number };
  /** The decision memo's lookups in this process, over every bundle revision it served. */
  memo?: () => { hits: number; misses: number };
}): ServiceMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const decisions = new DecisionCounts(registry);
  const counter = (name: string, help: string, value: () => number) => statusCounter(registry, name, help, value);
  const gauge = (name: string, help: string, aggregator: "min" | "max", value: () => number) =>
    statusGauge(registry, name, help, aggregator, value);
  const info = buildInfo();
  new Gauge({
    name: "portier_build_info",
    help: "The running build (value 1): Portier's version, the Node.js version and the source revision",
    labelNames: ["version", "node_version", "revision"] as const,
    aggregator: "first",
    registers: [registry],
  }).set({ version: info.version, node_version: info.nodeVersion, revision: info.revision }, 1);
  // One reloaded input: its successes, failures, the time of its last success and whether its last attempt failed.
  // A file is read again only when it changes, so an old last success alone is no alarm: an alert pairs it with
  // the last-failed flag (docs/operating/alerts.yaml). Across workers the timestamp takes the stalest worker's.
  const reloaded = (prefix: string, what: string, status: () => ReloadCounts | undefined) => {
    counter(
      `${prefix}_reload_successes_total`,
      `Successful ${what} loads and polls (a new value activated, or the same one confirmed: 304, unchanged file)`,
      () => successes(status()),
    );
    gauge(
      `${prefix}_last_success_timestamp_seconds`,
      `Unix time of the last successful ${what} load or poll (0 before the first)`,
      "min",
      () => seconds(status()?.lastSuccessfulRequest),
    );
  };
  reloaded("portier_keys", "issuer key set", sources.keys);
  counter("portier_keys_reload_failures_total", "Failed or refused issuer key set loads", () =>
    failures(sources.keys()),
  );
  gauge("portier_keys_last_load_failed", "1 until a key set load succeeds after a failed one", "max", () =>
    sources.keys().lastError ? 1 : 0,
  );
  // Renamed to the portier_keys_ prefix of the other key series; the old names answer for one more release.
  counter("portier_key_refreshes_total", `${DEPRECATED} portier_keys_reload_successes_total`, () =>
    successes(sources.keys()),
  );
  counter("portier_key_refresh_failures_total", `${DEPRECATED} portier_keys_reload_failures_total`, () =>
    failures(sources.keys()),
  );
  gauge("portier_keys_last_refresh_failed", `${DEPRECATED} portier_keys_last_load_failed`, "max", () =>
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
  reloaded("portier_policy", "policy bundle", sources.policy);
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
  reloaded("portier_directory", "directory", sources.directory);
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
