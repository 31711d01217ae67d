/**
 * metricValue reads the sample, never the HELP line: a real scrape of a service with no failure says
 * "# HELP portier_policy_last_load_failed 1 when ...", which `includes("portier_policy_last_load_failed 1")` took
 * for a failure (the reload tests waited on it and read /ready before the poll had failed).
 */
import { describe, expect, it } from "vitest";
import { createMetrics } from "../../src/service/metrics.js";
import { metricValue } from "./metrics.js";

async function scrape(failing: boolean): Promise<string> {
  const lastError = failing ? "refused" : undefined;
  const m = createMetrics({
    keys: () => ({ refreshes: 1, refreshFailures: 0, ready: true, ...(lastError && { lastError }) }),
    policy: () => ({ revision: "r-1", loaded: true, reloadFailures: 0, ...(lastError && { lastError }) }),
    directory: () => ({ size: 2, reloadFailures: 0, ...(lastError && { lastError }) }),
  });
  return m.registry.metrics();
}

describe("metricValue", () => {
  it.each([
    ["portier_policy_last_load_failed", false, 0],
    ["portier_policy_last_load_failed", true, 1],
    ["portier_keys_last_refresh_failed", false, 0],
    ["portier_keys_last_refresh_failed", true, 1],
    ["portier_directory_last_load_failed", false, 0],
    ["portier_directory_last_load_failed", true, 1],
    ["portier_directory_size", false, 2],
    ["portier_no_such_metric", false, undefined],
  ])("%s (failing: %s) is %s", async (name, failing, value) => {
    expect(metricValue(await scrape(failing), name)).toBe(value);
  });

  it("reads a labelled sample only with its labels", async () => {
    const text = await scrape(false);
    expect(metricValue(text, "portier_policy_revision_info", { revision: "r-1" })).toBe(1);
    expect(metricValue(text, "portier_policy_revision_info", { revision: "r-2" })).toBeUndefined();
    expect(metricValue(text, "portier_policy_revision_info")).toBeUndefined();
  });
});
