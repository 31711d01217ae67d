/**
 * deploy/helm/portier rendered by the pinned helm (tools/ensure-helm.sh) for several value sets, each rendered
 * manifest checked: kubeconform -strict (offline schemas), the Pod Security "restricted" profile's fields, the
 * portier container's portier.json and mounted files accepted by `portier serve --check-config`, no replicas
 * beside an autoscaler, probes and monitors on the admin port, a sidecar gated on /ready with a verified bundle
 * and a /tmp as large as --directory-max-bytes. And every `portier serve` option is reachable through `config`
 * (values.schema.json is generated from the options table; a misspelt key is refused by helm). Skipped, saying
 * why, where helm or kubeconform is not built (make kube-tools builds them; needs Go).
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { describe, expect, it } from "vitest";
import { OPTIONS } from "../../src/service/config.js";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { PORTIER_BIN } from "../support/portier-bin.js";
import { kubeconform, kubeconformBuilt } from "./kubeconform.js";

const HELM = join(PROJECT_ROOT, ".tools", "bin", "helm");
const CHART = join(PROJECT_ROOT, "deploy", "helm", "portier");
const present = existsSync(HELM) && kubeconformBuilt;
if (!present)
  console.warn(`Helm chart tests skipped: ${HELM} or kubeconform is not built (run make kube-tools, which needs Go)`);

interface Container {
  name: string;
  args?: string[];
  ports?: { name: string; containerPort: number }[];
  startupProbe?: { httpGet: { path: string; port: string } };
  readinessProbe?: { httpGet?: { path: string; port: string }; failureThreshold?: number };
  restartPolicy?: string;
  securityContext?: Record<string, unknown>;
  volumeMounts?: { name: string; mountPath: string }[];
}
interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  securityContext: Record<string, unknown>;
  volumes: { name: string; configMap?: { name: string }; emptyDir?: { sizeLimit?: string }; hostPath?: unknown }[];
  hostNetwork?: boolean;
  hostPID?: boolean;
}
interface K8sObject {
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  data?: Record<string, string>;
  spec: {
    replicas?: number;
    template: { spec: PodSpec };
    endpoints?: { port: string }[];
    podMetricsEndpoints?: { port: string }[];
    ports?: { name: string; targetPort: string }[];
  };
}

function helm(...args: string[]): { yaml: string; err: string; status: number | null } {
  const r = spawnSync(HELM, ["template", "portier", CHART, ...args], { encoding: "utf8", timeout: 60_000 });
  return { yaml: r.stdout, err: r.stderr, status: r.status };
}

const cache = new Map<string, { yaml: string; objects: K8sObject[] }>();

function rendered(args: string[]): { yaml: string; objects: K8sObject[] } {
  const key = JSON.stringify(args);
  const hit = cache.get(key);
  if (hit) return { yaml: hit.yaml, objects: structuredClone(hit.objects) };
  const r = helm(...args);
  expect(r.err.split("\n").filter((l) => l && !l.includes("symbolic link"))).toEqual([]);
  expect(r.status).toBe(0);
  const out = { yaml: r.yaml, objects: YAML.parseAllDocuments(r.yaml).map((d) => d.toJSON() as K8sObject) };
  cache.set(key, out);
  return { yaml: out.yaml, objects: structuredClone(out.objects) };
}

const one = (objects: K8sObject[], kind: string) => {
  const found = objects.filter((o) => o.kind === kind);
  expect(found, kind).toHaveLength(1);
  return found[0]!;
};
const podSpec = (objects: K8sObject[]) => one(objects, "Deployment").spec.template.spec;
const portierContainer = (spec: PodSpec) =>
  [...spec.containers, ...(spec.initContainers ?? [])].find((c) => c.name === "portier")!;

interface OptionSchema {
  default?: unknown;
  enum?: unknown[];
  minimum?: number;
  pattern?: string;
  type?: string;
}

const SIDECAR = ["-f", join(CHART, "values-sidecar.yaml")];
const VALUE_SETS: Record<string, string[]> = {
  central: [],
  "central, fixed replicas, ServiceMonitor, no gRPC": [
    "--set",
    "autoscaling.enabled=false,replicaCount=3,metrics.monitor.enabled=true",
    "--set-json",
    "config.grpcPort=null",
  ],
  sidecar: SIDECAR,
  "sidecar with a PodMonitor and a 1 GiB directory cap": [
    ...SIDECAR,
    "--set",
    "metrics.monitor.enabled=true,config.directoryMaxBytes=1073741824",
  ],
};

/** A Kubernetes quantity in bytes (2112Mi, 64Mi). */
const bytes = (q: string) => Number(/^(\d+)Mi$/.exec(q)?.[1] ?? NaN) * 2 ** 20;

/**
 * `portier serve --check-config` on the portier container as rendered: its ConfigMap volumes written under a
 * temporary root at their mount paths, and every path in portier.json moved under that root.
 */
async function checkConfig(
  objects: K8sObject[],
): Promise<{ stdout: string; stderr: string; status: number | null; config: Record<string, unknown> }> {
  const spec = podSpec(objects);
  const container = portierContainer(spec);
  const root = mkdtempSync(join(tmpdir(), "portier-helm-"));
  const mounts = container.volumeMounts ?? [];
  for (const mount of mounts) {
    const volume = spec.volumes.find((v) => v.name === mount.name);
    mkdirSync(join(root, mount.mountPath), { recursive: true });
    if (!volume?.configMap) continue;
    const map = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === volume.configMap!.name);
    expect(map, `ConfigMap ${volume.configMap.name}`).toBeDefined();
    for (const [key, value] of Object.entries(map!.data ?? {})) writeFileSync(join(root, mount.mountPath, key), value);
  }
  expect(container.args?.slice(0, 2)).toEqual(["serve", "--config"]);
  const file = join(root, container.args![2]!);
  const config = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  const moved = Object.fromEntries(
    Object.entries(config).map(([k, v]) => [
      k,
      typeof v === "string" && mounts.some((m) => v.startsWith(`${m.mountPath}/`)) ? join(root, v) : v,
    ]),
  );
  writeFileSync(file, JSON.stringify(moved));
  // Not spawnSync: the check takes seconds on a loaded machine, and a blocked worker cannot report to vitest.
  const child = spawn(process.execPath, [PORTIER_BIN, "serve", "--config", file, "--check-config"], {
    env: { PATH: process.env["PATH"], TMPDIR: tmpdir() },
    timeout: 30_000,
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const status = await new Promise<number | null>((resolve) => child.once("close", resolve));
  return { stdout, stderr, status, config };
}

describe.skipIf(!present)("deploy/helm/portier rendered by helm template", () => {
  describe.each(Object.keys(VALUE_SETS))("%s", (name) => {
    const args = VALUE_SETS[name]!;

    it("is valid against the Kubernetes API schemas (kubeconform -strict)", () => {
      const r = kubeconform(rendered(args).yaml);
      expect(r.out).toMatch(/Invalid: 0, Errors: 0, Skipped: 0/);
      expect(r.status).toBe(0);
    }, 120_000);

    it('meets Pod Security "restricted" in every container', () => {
      const spec = podSpec(rendered(args).objects);
      expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
      expect(spec.hostNetwork ?? false).toBe(false);
      expect(spec.hostPID ?? false).toBe(false);
      for (const v of spec.volumes) expect(v.hostPath, v.name).toBeUndefined();
      for (const c of [...spec.containers, ...(spec.initContainers ?? [])])
        expect(c.securityContext, c.name).toEqual({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ["ALL"] },
        });
    });

    it("runs portier with a portier.json and files that --check-config accepts", async () => {
      const r = await checkConfig(rendered(args).objects);
      expect(r.stderr).toBe("");
      expect(r.stdout).toMatch(/^portier serve: configuration ok: /);
      expect(r.status).toBe(0);
    }, 60_000);

    it("probes and scrapes the admin port; no replicas beside an autoscaler", async () => {
      const { objects } = rendered(args);
      const container = portierContainer(podSpec(objects));
      const admin = container.ports?.find((p) => p.name === "admin")?.containerPort;
      expect(admin).toBe((await checkConfig(objects)).config["adminPort"]);
      expect(container.readinessProbe?.httpGet?.path).toBe("/ready");
      expect(container.readinessProbe?.failureThreshold).toBeGreaterThan(1);
      const hpa = objects.some((o) => o.kind === "HorizontalPodAutoscaler");
      expect(one(objects, "Deployment").spec.replicas === undefined).toBe(hpa);
      const monitor = objects.find((o) => o.kind === "ServiceMonitor" || o.kind === "PodMonitor");
      if (monitor?.kind === "PodMonitor") expect(monitor.spec.podMetricsEndpoints?.[0]?.port).toBe("admin");
      if (monitor?.kind === "ServiceMonitor") {
        expect(monitor.spec.endpoints?.[0]?.port).toBe("admin");
        const port = one(objects, "Service").spec.ports?.find((p) => p.name === "admin");
        expect(port?.targetPort).toBe("admin");
      }
      expect(monitor !== undefined).toBe(args.join(" ").includes("metrics.monitor.enabled=true"));
    });
  });

  it("sidecar: gated on /ready, the bundle verified, /tmp holds the largest directory download", async () => {
    for (const args of [SIDECAR, VALUE_SETS["sidecar with a PodMonitor and a 1 GiB directory cap"]!]) {
      const { objects } = rendered(args);
      const spec = podSpec(objects);
      const container = portierContainer(spec);
      expect(container.restartPolicy).toBe("Always");
      expect(container.startupProbe?.httpGet.path).toBe("/ready");
      const { config } = await checkConfig(objects);
      expect(config["verificationKey"]).toMatch(/^\/etc\/portier\/files\//);
      expect(config["host"]).toBe("127.0.0.1");
      const tmp = spec.volumes.find((v) => v.name === "tmp")?.emptyDir?.sizeLimit ?? "0Mi";
      expect(bytes(tmp)).toBeGreaterThanOrEqual(config["directoryMaxBytes"] as number);
      const gateway = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name.endsWith("-gateway"));
      expect(gateway?.data?.["default.conf"]).toContain(
        `proxy_pass http://127.0.0.1:${config["port"] as number}/forward-auth/nginx;`,
      );
    }
  });

  it("every portier serve option is reachable through config, and a misspelt key is refused", () => {
    const schema = JSON.parse(readFileSync(join(CHART, "values.schema.json"), "utf8")) as {
      properties: { config: { properties: Record<string, OptionSchema> } };
    };
    const keys = Object.keys(schema.properties.config.properties).sort();
    const camel = (flag: string) => flag.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
    expect(keys).toEqual(
      Object.keys(OPTIONS)
        // --config and --project name where the configuration is, so no config file holds them.
        .filter((f) => f !== "config" && f !== "project")
        .map(camel)
        .sort(),
    );
    // Every option set at once (its default, its first allowed value, or a value of its type) reaches portier.json.
    const sample = (s: OptionSchema): unknown =>
      s.default ??
      s.enum?.[0] ??
      s.minimum ??
      (s.pattern?.startsWith("^http") ? "https://example.org/x" : undefined) ??
      ({ string: "x", integer: 1, number: 1, boolean: true } as Record<string, unknown>)[s.type ?? "string"];
    const config = Object.fromEntries(keys.map((k) => [k, sample(schema.properties.config.properties[k]!)]));
    // Values the chart requires, and an option whose pattern no generic sample meets.
    Object.assign(config, {
      issuer: "https://auth.example.org",
      host: "0.0.0.0",
      adminHost: "0.0.0.0",
      decisionLogLabel: "team=platform",
      scimPostgresUrl: "postgres://portier@db.example.org/portier",
      port: 8181,
      adminPort: 8182,
    });
    const { objects } = rendered(["--set-json", `config=${JSON.stringify(config)}`]);
    const map = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name.endsWith("-config"));
    expect(JSON.parse(map?.data?.["portier.json"] ?? "{}")).toEqual(config);
    const typo = helm("--set", "config.prot=8181");
    expect(typo.status).not.toBe(0);
    expect(typo.err).toMatch(/additional properties 'prot' not allowed/);
  }, 60_000);
});
