/**
 * docs/operating/grafana-dashboard.json: the RED panels (rate, errors, duration) are per adapter; every query
 * reads only series the service exposes (the generated metrics reference) and parses as PromQL (each query, with
 * Grafana's variables filled in, checked as a recording rule by the pinned promtool; skipped, saying why, where
 * promtool is not built).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";

const PROMTOOL = join(PROJECT_ROOT, ".tools", "bin", "promtool");
if (!existsSync(PROMTOOL))
  console.warn(`dashboard query check skipped: ${PROMTOOL} is not built (run make kube-tools, which needs Go)`);

interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; w: number };
  targets?: { expr: string }[];
}
const dashboard = JSON.parse(
  readFileSync(join(PROJECT_ROOT, "docs", "operating", "grafana-dashboard.json"), "utf8"),
) as { panels: Panel[]; templating: { list: { name: string }[] } };
const queries = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));

/** The query as Prometheus receives it from Grafana: variables replaced by what "All" and a 1m scrape give. */
const filled = (expr: string) =>
  expr.replaceAll("$__rate_interval", "2m").replace(/\$(namespace|pod|adapter)\b/g, ".*");

describe("the Grafana dashboard", () => {
  it("has rate, errors and duration panels grouped by adapter", () => {
    const red = dashboard.panels.filter((p) => /^(Rate|Errors|Duration):/.test(p.title));
    expect(red.map((p) => p.title.split(":")[0])).toEqual(["Rate", "Errors", "Duration"]);
    for (const p of red)
      for (const t of p.targets ?? []) {
        expect(t.expr, p.title).toMatch(/by \(adapter\b/);
        expect(t.expr, p.title).toContain('adapter=~"$adapter"');
      }
    expect(dashboard.templating.list.map((v) => v.name)).toEqual(["datasource", "namespace", "pod", "adapter"]);
  });

  it("reads only series the service exposes, with unique panel ids on a 24-column grid", () => {
    const reference = readFileSync(join(PROJECT_ROOT, "docs", "reference", "metrics.md"), "utf8");
    const exposed = new Set([...reference.matchAll(/^\| `(portier_[a-z_]+)`/gm)].map((m) => m[1]!));
    expect(queries.length).toBeGreaterThan(10);
    for (const q of queries)
      for (const [name] of q.expr.matchAll(/portier_[a-z_]+/g))
        expect(exposed.has(name.replace(/_bucket$/, "")), `${q.panel}: ${name}`).toBe(true);
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of dashboard.panels) expect(p.gridPos.x + p.gridPos.w, p.title).toBeLessThanOrEqual(24);
  });

  it.skipIf(!existsSync(PROMTOOL))("every query parses as PromQL (promtool check rules)", () => {
    const dir = mkdtempSync(join(tmpdir(), "portier-dashboard-"));
    const rules = queries.map((q, i) => ({ record: `portier:dashboard_query_${i}`, expr: filled(q.expr) }));
    writeFileSync(join(dir, "queries.yaml"), YAML.stringify({ groups: [{ name: "dashboard", rules }] }));
    const r = spawnSync(PROMTOOL, ["check", "rules", "queries.yaml"], { cwd: dir, encoding: "utf8" });
    expect(r.stdout + r.stderr).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(r.status).toBe(0);
  });
});
