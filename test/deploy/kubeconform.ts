/**
 * Test support: kubeconform -strict over rendered manifests, against schemas written offline once per process
 * (tools/k8s-json-schemas.ts: the pinned Kubernetes API and the Prometheus Operator's CRDs).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { writeKubernetesSchemas } from "../../tools/k8s-json-schemas.js";

export const KUBECONFORM = join(PROJECT_ROOT, ".tools", "bin", "kubeconform");
export const kubeconformBuilt = existsSync(KUBECONFORM);

let schemas: string | undefined;

/** kubeconform's summary and exit status for the YAML documents in `yaml`. */
export function kubeconform(yaml: string): { out: string; status: number | null } {
  if (schemas === undefined) {
    schemas = mkdtempSync(join(tmpdir(), "k8s-schemas-"));
    writeKubernetesSchemas(schemas);
  }
  const file = join(mkdtempSync(join(tmpdir(), "k8s-")), "rendered.yaml");
  writeFileSync(file, yaml);
  const r = spawnSync(
    KUBECONFORM,
    ["-strict", "-summary", "-schema-location", join(schemas, "{{ .ResourceKind }}{{ .KindSuffix }}.json"), file],
    { encoding: "utf8" },
  );
  return { out: r.stdout + r.stderr, status: r.status };
}
