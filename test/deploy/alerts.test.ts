/**
 * docs/operating/alerts.yaml, the example PrometheusRule: its rules pass `promtool check rules` and the unit tests
 * of docs/operating/alerts.test.yaml (`promtool test rules`), with promtool pinned and built from the Go module
 * proxy (tools/ensure-promtool.sh); every portier_ series a rule reads is one the service exposes (the generated
 * metrics reference), since promtool cannot tell a misspelt series from one that is merely absent; and the object
 * is a valid PrometheusRule (kubeconform -strict against the Prometheus Operator's CRD schema). Skipped, saying
 * why, where promtool or kubeconform is not built (make kube-tools builds them; needs Go).
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { kubeconform, kubeconformBuilt } from "./kubeconform.js";

const PROMTOOL = join(PROJECT_ROOT, ".tools", "bin", "promtool");
const ALERTS = join(PROJECT_ROOT, "docs", "operating", "alerts.yaml");
const ALERT_TESTS = join(PROJECT_ROOT, "docs", "operating", "alerts.test.yaml");
if (!existsSync(PROMTOOL))
  console.warn(`alert rule tests skipped: ${PROMTOOL} is not built (run make kube-tools, which needs Go)`);
if (!kubeconformBuilt)
  console.warn("PrometheusRule schema test skipped: kubeconform is not built (run make kube-tools)");

interface PrometheusRule {
  kind: string;
  spec: { groups: { name: string; rules: { alert: string; expr: string }[] }[] };
}

const rule = YAML.parse(readFileSync(ALERTS, "utf8")) as PrometheusRule;

/** The rules as a plain Prometheus rule file beside a copy of the unit tests, which name it. */
function ruleFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), "portier-alerts-"));
  writeFileSync(join(dir, "portier.rules.yaml"), YAML.stringify(rule.spec));
  copyFileSync(ALERT_TESTS, join(dir, "alerts.test.yaml"));
  return dir;
}

function promtool(dir: string, ...args: string[]): { out: string; status: number | null } {
  const r = spawnSync(PROMTOOL, args, { cwd: dir, encoding: "utf8", timeout: 60_000 });
  return { out: r.stdout + r.stderr, status: r.status };
}

describe("the example alerting rules", () => {
  it.skipIf(!existsSync(PROMTOOL))("pass promtool check rules", () => {
    const r = promtool(ruleFolder(), "check", "rules", "portier.rules.yaml");
    expect(r.out).toMatch(/SUCCESS: \d+ rules found/);
    expect(r.status).toBe(0);
  });

  it.skipIf(!existsSync(PROMTOOL))("pass their unit tests (promtool test rules)", () => {
    const r = promtool(ruleFolder(), "test", "rules", "alerts.test.yaml");
    expect(r.out).toContain("SUCCESS");
    expect(r.status).toBe(0);
  });

  it.skipIf(!existsSync(PROMTOOL))("every alert has a unit test", () => {
    const tested = readFileSync(ALERT_TESTS, "utf8");
    for (const r of rule.spec.groups.flatMap((g) => g.rules))
      expect(tested, r.alert).toContain(`alertname: ${r.alert}`);
  });

  it("read only series the service exposes (docs/reference/metrics.md, generated from its registry)", () => {
    const reference = readFileSync(join(PROJECT_ROOT, "docs", "reference", "metrics.md"), "utf8");
    const exposed = new Set([...reference.matchAll(/^\| `(portier_[a-z_]+)`/gm)].map((m) => m[1]!));
    expect(exposed.size).toBeGreaterThan(20);
    const read = rule.spec.groups.flatMap((g) => g.rules.flatMap((r) => [...r.expr.matchAll(/portier_[a-z_]+/g)]));
    expect(read.length).toBeGreaterThan(0);
    for (const [name] of read) {
      const family = name.replace(/_(bucket|sum|count)$/, "");
      expect(exposed.has(family), name).toBe(true);
    }
  });

  it.skipIf(!kubeconformBuilt)(
    "is a valid PrometheusRule (kubeconform -strict)",
    () => {
      const r = kubeconform(readFileSync(ALERTS, "utf8"));
      expect(r.out).toMatch(/Valid: 1, Invalid: 0, Errors: 0, Skipped: 0/);
      expect(r.status).toBe(0);
    },
    120_000,
  );
});
