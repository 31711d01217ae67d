/**
 * The shadow candidate's series: portier_shadow_decisions_total{change} (every verdict, by how it compares
 * with the enforced answer), portier_shadow_skipped_total{why} (not shadowed: the backlog was full, or no
 * candidate was loaded), portier_shadow_revision_info and portier_shadow_last_load_failed. Counters add up
 * across --workers, as the service's own do.
 */
import { Counter, Gauge, type Registry } from "prom-client";
import { SHADOW_CHANGES } from "./compare.js";
import type { ShadowStatus } from "./shadow.js";

export function registerShadowMetrics(registry: Registry, status: () => ShadowStatus): void {
  new Counter({
    name: "portier_shadow_decisions_total",
    help: "Decisions the shadow candidate also evaluated, by change: new_allow, new_deny, other_reason, same",
    labelNames: ["change"] as const,
    registers: [registry],
    collect() {
      this.reset();
      const d = status().decisions;
      for (const change of SHADOW_CHANGES) this.inc({ change }, d[change]);
    },
  });
  new Counter({
    name: "portier_shadow_skipped_total",
    help: "Sampled decisions the shadow candidate did not evaluate: backlog (too many waiting), no_candidate",
    labelNames: ["why"] as const,
    registers: [registry],
    collect() {
      this.reset();
      const s = status().skipped;
      this.inc({ why: "backlog" }, s.backlog);
      this.inc({ why: "no_candidate" }, s.no_candidate);
    },
  });
  new Gauge({
    name: "portier_shadow_revision_info",
    help: "Shadow candidate revision currently evaluated (value 1)",
    labelNames: ["revision"] as const,
    aggregator: "max",
    registers: [registry],
    collect() {
      this.reset();
      const revision = status().revision;
      if (revision) this.set({ revision }, 1);
    },
  });
  new Gauge({
    name: "portier_shadow_last_load_failed",
    help: "1 when the shadow candidate is not loaded or its last load or poll failed",
    aggregator: "max",
    registers: [registry],
    collect() {
      this.set(status().lastError || !status().loaded ? 1 : 0);
    },
  });
}
