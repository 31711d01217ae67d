/**
 * The SCIM series: portier_scim_revision (the last change applied here), portier_scim_lag_revisions (changes
 * committed in PostgreSQL and not yet applied here), portier_scim_users, portier_scim_writes_total and
 * portier_scim_held_total (changes refused by the de-provisioning guard).
 */
import type { Registry } from "prom-client";
import { statusCounter, statusGauge } from "../metrics.js";
import type { ScimStatus } from "./scim-service.js";

export function registerScimMetrics(registry: Registry, status: () => ScimStatus): void {
  const gauge = (name: string, help: string, aggregator: "min" | "max", value: (s: ScimStatus) => number) =>
    statusGauge(registry, name, help, aggregator, () => value(status()));
  const counter = (name: string, help: string, value: (s: ScimStatus) => number) =>
    statusCounter(registry, name, help, () => value(status()));
  gauge("portier_scim_revision", "Revision of the last SCIM change applied here", "min", (s) => s.revision);
  gauge(
    "portier_scim_lag_revisions",
    "SCIM changes committed in PostgreSQL and not yet applied here (0 with a journal)",
    "max",
    (s) => (typeof s.store.lag === "number" ? s.store.lag : 0),
  );
  gauge("portier_scim_users", "SCIM users held", "min", (s) => s.users);
  counter("portier_scim_writes_total", "SCIM changes accepted and stored by this process", (s) => s.writes);
  counter("portier_scim_held_total", "SCIM changes held by the de-provisioning guard", (s) => s.held);
}
