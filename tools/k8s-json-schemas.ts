/**
 * Writes the JSON schemas kubeconform validates Kubernetes objects with, offline and from a pinned source: the
 * OpenAPI document (api/openapi-spec/swagger.json) inside the k8s.io/kubernetes Go module, downloaded once through
 * the Go module proxy into Go's module cache (`go mod download`). One file per kind, named as kubeconform's
 * `{{ .ResourceKind }}{{ .KindSuffix }}.json` template expects (deployment-apps-v1.json, service-v1.json), each
 * holding the definitions it refers to, made strict the way kubeconform's own schemas are (an object with listed
 * properties refuses any other; apiVersion and kind must be the kind's), int-or-string and quantities accept both
 * spellings. The Prometheus Operator's kinds the manifests use (ServiceMonitor, PodMonitor, PrometheusRule) come the
 * same way from the CRDs in the pinned github.com/prometheus-operator/prometheus-operator module
 * (example/prometheus-operator-crd/). Usage: npx tsx tools/k8s-json-schemas.ts OUT_DIR
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import YAML from "yaml";

/** The Kubernetes release whose API the manifests are checked against. */
export const KUBERNETES_VERSION = "v1.34.2";
/** The Prometheus Operator release whose CRDs give the monitoring.coreos.com kinds' schemas. */
const PROMETHEUS_OPERATOR = { module: "github.com/prometheus-operator/prometheus-operator", version: "v0.85.0" };
const OPERATOR_CRDS = ["servicemonitors", "podmonitors", "prometheusrules"];

type Schema = Record<string, unknown>;
interface Gvk {
  group: string;
  version: string;
  kind: string;
}

function isSchema(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Where Go keeps the downloaded module (downloads it through the module proxy the first time). */
function moduleDir(module = "k8s.io/kubernetes", version = KUBERNETES_VERSION): string {
  const out = execFileSync("go", ["mod", "download", "-json", `${module}@${version}`], {
    encoding: "utf8",
    env: { ...process.env, GOFLAGS: "-mod=mod" },
    cwd: process.env["TMPDIR"] ?? "/tmp",
    maxBuffer: 1024 * 1024,
  });
  const info = JSON.parse(out) as { Dir?: string; Error?: string };
  if (!info.Dir) throw new Error(`go mod download ${module}@${version}: ${info.Error ?? out}`);
  return info.Dir;
}

/** A swagger schema as JSON Schema: strict objects, both spellings of int-or-string. */
function convert(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(convert);
  if (!isSchema(node)) return node;
  if (node["format"] === "int-or-string")
    return { oneOf: [{ type: "string" }, { type: "integer" }], description: node["description"] };
  const out: Schema = {};
  for (const [key, value] of Object.entries(node)) {
    if (key.startsWith("x-kubernetes-")) continue;
    out[key] =
      key === "properties" && isSchema(value)
        ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, convert(v)]))
        : convert(value);
  }
  if (isSchema(out["properties"]) && out["additionalProperties"] === undefined) out["additionalProperties"] = false;
  return out;
}

function refsOf(node: unknown, into: Set<string>): void {
  if (Array.isArray(node)) for (const n of node) refsOf(n, into);
  else if (isSchema(node))
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" && typeof value === "string") into.add(value.replace("#/definitions/", ""));
      else refsOf(value, into);
    }
}

/** kubeconform's KindSuffix: "-" + the group's first label (none for the core group) + "-" + the version. */
function fileName({ group, version, kind }: Gvk): string {
  const suffix = group ? `-${group.split(".")[0]!.toLowerCase()}-${version}` : `-${version}`;
  return `${kind.toLowerCase()}${suffix}.json`;
}

interface Crd {
  spec: {
    group: string;
    names: { kind: string };
    versions: { name: string; schema: { openAPIV3Schema: Schema } }[];
  };
}

/** Writes one schema per version of the Prometheus Operator's CRDs the manifests use; returns how many. */
function writeOperatorSchemas(outDir: string): number {
  const dir = join(
    moduleDir(PROMETHEUS_OPERATOR.module, PROMETHEUS_OPERATOR.version),
    "example",
    "prometheus-operator-crd",
  );
  let written = 0;
  for (const plural of OPERATOR_CRDS) {
    const text = readFileSync(join(dir, `monitoring.coreos.com_${plural}.yaml`), "utf8");
    const crd = YAML.parseAllDocuments(text)[0]!.toJSON() as Crd;
    for (const version of crd.spec.versions) {
      const gvk = { group: crd.spec.group, version: version.name, kind: crd.spec.names.kind };
      const root = convert(version.schema.openAPIV3Schema) as Schema;
      const properties = root["properties"] as Schema;
      properties["apiVersion"] = { type: "string", enum: [`${gvk.group}/${gvk.version}`] };
      properties["kind"] = { type: "string", enum: [gvk.kind] };
      writeFileSync(join(outDir, fileName(gvk)), JSON.stringify(root));
      written++;
    }
  }
  return written;
}

/** Writes one schema per kind of the pinned Kubernetes API (and the operator's kinds) into outDir; returns how many. */
export function writeKubernetesSchemas(outDir: string): number {
  const swagger = JSON.parse(readFileSync(join(moduleDir(), "api", "openapi-spec", "swagger.json"), "utf8")) as {
    definitions: Record<string, Schema>;
  };
  const definitions: Record<string, unknown> = {};
  for (const [name, def] of Object.entries(swagger.definitions)) definitions[name] = convert(def);
  // Quantities ("500m", 1) and raw JSON are not the plain strings or objects the document declares.
  definitions["io.k8s.apimachinery.pkg.api.resource.Quantity"] = { oneOf: [{ type: "string" }, { type: "number" }] };
  mkdirSync(outDir, { recursive: true });
  let written = 0;
  for (const [name, def] of Object.entries(swagger.definitions)) {
    const gvks = def["x-kubernetes-group-version-kind"] as Gvk[] | undefined;
    if (!gvks) continue;
    const used = new Set<string>();
    const pending = [name];
    while (pending.length) {
      const next = pending.pop()!;
      if (used.has(next)) continue;
      used.add(next);
      const found = new Set<string>();
      refsOf(definitions[next], found);
      pending.push(...found);
    }
    for (const gvk of gvks) {
      const root = structuredClone(definitions[name]) as Schema;
      const properties = root["properties"] as Schema;
      const apiVersion = gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version;
      properties["apiVersion"] = { type: "string", enum: [apiVersion] };
      properties["kind"] = { type: "string", enum: [gvk.kind] };
      const document = { ...root, definitions: Object.fromEntries([...used].map((d) => [d, definitions[d]])) };
      writeFileSync(join(outDir, fileName(gvk)), JSON.stringify(document));
      written++;
    }
  }
  return written + writeOperatorSchemas(outDir);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const out = process.argv[2];
  if (!out) {
    console.error("usage: npx tsx tools/k8s-json-schemas.ts OUT_DIR");
    process.exit(2);
  }
  console.log(`k8s-json-schemas: ${writeKubernetesSchemas(out)} schemas of Kubernetes ${KUBERNETES_VERSION} in ${out}`);
}
