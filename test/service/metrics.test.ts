/**
 * The series an SRE alerts on (issue 37 item 2): the build, each reloaded input's successes and the time of its
 * last success, the key series under the portier_keys_ prefix with their old names kept as deprecated aliases,
 * and latency buckets up to 5 s. Read from createMetrics' registry over statuses given as a table.
 */
import { describe, expect, it } from "vitest";
import { createMetrics } from "../../src/service/metrics.js";
import { DECISION_BUCKETS } from "../../src/service/decision-counts.js";
import { metricValue } from "../support/metrics.js";

const AT = "2026-11-28T10:00:00.000Z";
const AT_S = Date.parse(AT) / 1000;

async function scrape(o: { failing?: boolean; loaded?: boolean } = {}): Promise<string> {
  const lastError = o.failing ? "refused" : undefined;
  const success = o.loaded === false ? {} : { lastSuccessfulRequest: AT };
  const m = createMetrics({
    keys: () => ({
      refreshes: 7,
      refreshFailures: 2,
      successfulRequests: 7,
      reloadFailures: 2,
      ready: true,
      ...success,
      ...(lastError && { lastError }),
    }),
    policy: () => ({
      loaded: true,
      reloadFailures: 3,
      successfulRequests: 11,
      ...success,
      ...(lastError && { lastError }),
    }),
    directory: () => ({ size: 2, reloadFailures: 5, successfulRequests: 13, ...success }),
  });
  m.decisions.count(true, "allowed", "accessCode", "decide", 4);
  return m.registry.metrics();
}

describe("service metrics for alerts", () => {
  it("portier_build_info names the version, the Node.js version and the revision", async () => {
    const text = await scrape();
    const line = text.split("\n").find((l) => l.startsWith("portier_build_info{"));
    expect(line).toMatch(
      /^portier_build_info\{version="\d+\.\d+\.\d+[^"]*",node_version="[^"]+",revision="[^"]+"\} 1$/,
    );
    expect(line).toContain(`node_version="${process.versions.node}"`);
  });

  it.each([
    ["portier_keys_reload_successes_total", 7],
    ["portier_keys_reload_failures_total", 2],
    ["portier_keys_last_success_timestamp_seconds", AT_S],
    ["portier_policy_reload_successes_total", 11],
    ["portier_policy_reload_failures_total", 3],
    ["portier_policy_last_success_timestamp_seconds", AT_S],
    ["portier_directory_reload_successes_total", 13],
    ["portier_directory_reload_failures_total", 5],
    ["portier_directory_last_success_timestamp_seconds", AT_S],
  ])("%s is %s", async (name, value) => {
    expect(metricValue(await scrape(), name)).toBe(value);
  });

  it("a last-success timestamp is 0 before the first success", async () => {
    const text = await scrape({ loaded: false });
    for (const input of ["keys", "policy", "directory"])
      expect(metricValue(text, `portier_${input}_last_success_timestamp_seconds`)).toBe(0);
  });

  it.each([
    ["portier_key_refreshes_total", "portier_keys_reload_successes_total"],
    ["portier_key_refresh_failures_total", "portier_keys_reload_failures_total"],
    ["portier_keys_last_refresh_failed", "portier_keys_last_load_failed"],
  ])("the deprecated %s answers as %s and says so", async (old, renamed) => {
    for (const failing of [false, true]) {
      const text = await scrape({ failing });
      expect(metricValue(text, old)).toBe(metricValue(text, renamed));
    }
    expect(await scrape()).toContain(`# HELP ${old} Deprecated (removed in the next release), use ${renamed}`);
  });

  it("decision latency buckets reach 5 s: a 4 s decision is not only in +Inf", async () => {
    expect(DECISION_BUCKETS.at(-1)).toBe(5);
    const text = await scrape();
    expect(metricValue(text, "portier_decision_duration_seconds_bucket", { le: "2.5", adapter: "decide" })).toBe(0);
    expect(metricValue(text, "portier_decision_duration_seconds_bucket", { le: "5", adapter: "decide" })).toBe(1);
  });
});
