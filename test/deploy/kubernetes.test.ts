/**
 * deploy/kubernetes: both shapes rendered with the real kustomize (pinned, tools/ensure-kustomize.sh), then the
 * rendered objects checked: valid against the Kubernetes API's schemas (kubeconform, tools/ensure-kubeconform.sh,
 * with schemas written offline from the pinned Kubernetes module: tools/k8s-json-schemas.ts); every argument,
 * PORTIER_* variable and mounted config file of the portier container accepted by `portier serve --check-config`
 * (ConfigMap volumes written to a temporary folder at their mount paths); probes, ports and scrape annotations
 * matching the configuration that run loads; the grace period above the shutdown timeout; the security context;
 * the NetworkPolicy letting only the gateway reach the decision port. No cluster runs here. Skipped, saying
 * why, where the two tools are not built (make kube-tools builds them; needs Go).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import YAML from "yaml";
import { beforeAll, describe, expect, it } from "vitest";
import { loadConfig, type ServiceConfig } from "../../src/service/config.js";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { KUBECONFORM, kubeconform } from "./kubeconform.js";
import { PORTIER_BIN } from "../support/portier-bin.js";

const KUSTOMIZE = join(PROJECT_ROOT, ".tools", "bin", "kustomize");
const present = existsSync(KUSTOMIZE) && existsSync(KUBECONFORM);
if (!present)
  console.warn(
    `Kubernetes manifest tests skipped: ${KUSTOMIZE} or ${KUBECONFORM} is not built (run make kube-tools, which ` +
      `needs Go; .ci/run does)`,
  );

/** The fields of rendered objects these tests read (kubeconform checks the rest against the API's schemas). */
interface Probe {
  httpGet: { path: string; port: string | number };
  periodSeconds: number;
  failureThreshold: number;
}
interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: { name: string; value: string }[];
  ports?: { name: string; containerPort: number }[];
  readinessProbe: Probe;
  livenessProbe: Probe;
  startupProbe: Probe;
  restartPolicy?: string;
  lifecycle?: { preStop?: { sleep?: { seconds: number } } };
  securityContext: unknown;
  resources: { requests: Record<string, string>; limits: Record<string, string> };
  volumeMounts?: { name: string; mountPath: string }[];
}
interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  volumes: { name: string; configMap?: { name: string }; emptyDir?: { sizeLimit?: string } }[];
  securityContext: unknown;
  terminationGracePeriodSeconds: number;
}
type Labels = Record<string, string>;
interface ServicePort {
  name: string;
  targetPort: string | number;
}
interface Peer {
  podSelector?: { matchLabels?: Labels };
  namespaceSelector?: unknown;
  ipBlock?: unknown;
}
interface MonitorEndpoint {
  port: string;
  path: string;
}
interface K8sObject {
  kind: string;
  metadata: { name: string; labels?: Labels };
  data?: Record<string, string>;
  spec: {
    replicas?: number;
    endpoints?: MonitorEndpoint[];
    podMetricsEndpoints?: MonitorEndpoint[];
    template: { metadata: { labels: Labels; annotations: Labels }; spec: PodSpec };
    selector: Labels & { matchLabels: Labels };
    ports: ServicePort[];
    scaleTargetRef: unknown;
    podSelector: { matchLabels: Labels };
    ingress: { from?: Peer[]; ports: { port: number }[] }[];
  };
}

interface Rendered {
  yaml: string;
  objects: K8sObject[];
}

function render(shape: string): Rendered {
  const yaml = execFileSync(KUSTOMIZE, ["build", join(PROJECT_ROOT, "deploy", "kubernetes", shape)], {
    encoding: "utf8",
  });
  return { yaml, objects: YAML.parseAllDocuments(yaml).map((d) => d.toJSON() as K8sObject) };
}

function one(objects: K8sObject[], kind: string, name?: string): K8sObject {
  const found = objects.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  expect(found, `${kind} ${name ?? ""}`).toHaveLength(1);
  return found[0]!;
}

function podSpec(objects: K8sObject[]): PodSpec {
  return one(objects, "Deployment").spec.template.spec;
}

/** The container running the portier image (a container or a native sidecar init container). */
function portierContainer(spec: PodSpec): Container {
  const all = [...spec.containers, ...(spec.initContainers ?? [])];
  const found = all.filter((c) => c.image.startsWith("registry.example.org/platform/portier:"));
  expect(found).toHaveLength(1);
  return found[0]!;
}

interface PortierRun {
  argv: string[];
  env: Record<string, string>;
  config: ServiceConfig;
}

/**
 * The portier container's arguments and PORTIER_* variables, with its ConfigMap volumes written under a
 * temporary root at their mount paths (and every path in the arguments and variables moved under that root).
 */
function portierRun(objects: K8sObject[]): PortierRun {
  const spec = podSpec(objects);
  const container = portierContainer(spec);
  const root = mkdtempSync(join(tmpdir(), "portier-k8s-"));
  const mounts = container.volumeMounts ?? [];
  for (const mount of mounts) {
    const volume = spec.volumes.find((v) => v.name === mount.name);
    expect(volume, `volume ${mount.name}`).toBeDefined();
    const dir = join(root, mount.mountPath);
    mkdirSync(dir, { recursive: true });
    if (volume?.configMap) {
      const map = one(objects, "ConfigMap", volume.configMap.name);
      for (const [key, value] of Object.entries(map.data ?? {})) writeFileSync(join(dir, key), value);
    }
  }
  const moved = (value: string) =>
    mounts.some((m) => value.startsWith(`${m.mountPath}/`)) ? join(root, value) : value;
  expect(container.command, "the image's entrypoint (portier) is used").toBeUndefined();
  const args = (container.args ?? []).map(moved);
  expect(args[0]).toBe("serve");
  const env: Record<string, string> = {};
  for (const e of container.env ?? []) {
    expect(e.name, "only PORTIER_* variables").toMatch(/^PORTIER_/);
    env[e.name] = moved(e.value);
  }
  return { argv: args.slice(1), env, config: loadConfig(args.slice(1), env) };
}

function containerPort(container: Container, port: string | number): number {
  if (typeof port === "number") return port;
  const found = (container.ports ?? []).find((p) => p.name === port);
  expect(found, `port ${port}`).toBeDefined();
  return found!.containerPort;
}

/** A Kubernetes quantity with a binary or decimal suffix (2Gi, 64Mi, 1G) in bytes. */
function quantityBytes(q: string): number {
  const m = /^(\d+)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(q);
  expect(m, `quantity ${q}`).not.toBeNull();
  const unit = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };
  return Number(m![1]) * (m![2] ? unit[m![2] as keyof typeof unit] : 1);
}

function matches(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

const UID = Number(/^USER (\d+)/m.exec(readFileSync(join(PROJECT_ROOT, "Containerfile"), "utf8"))![1]);

describe.skipIf(!present)("deploy/kubernetes rendered by kustomize", () => {
  const shapes: Record<string, Rendered> = {};
  beforeAll(() => {
    shapes["central"] = render("central");
    shapes["sidecar"] = render("sidecar");
    kubeconform(""); // writes the schemas once, within this hook's time
  }, 120_000);

  describe.each(["central", "sidecar"])("%s", (shape) => {
    it("is valid against the Kubernetes API schemas (kubeconform -strict)", () => {
      const r = kubeconform(shapes[shape]!.yaml);
      expect(r.out).toMatch(/Invalid: 0, Errors: 0, Skipped: 0/);
      expect(r.status).toBe(0);
    });

    it("runs portier with arguments, variables and a config file that --check-config accepts", () => {
      const { argv, env } = portierRun(shapes[shape]!.objects);
      const r = spawnSync(process.execPath, [PORTIER_BIN, "serve", ...argv, "--check-config"], {
        encoding: "utf8",
        env: { PATH: process.env["PATH"], TMPDIR: tmpdir(), ...env },
        timeout: 30_000,
      });
      expect(r.stderr).toBe("");
      expect(r.stdout).toMatch(/^portier serve: configuration ok: /);
      expect(r.status).toBe(0);
    });

    it("probes /ready and /health on the configured admin port, which Prometheus scrapes", () => {
      const objects = shapes[shape]!.objects;
      const spec = podSpec(objects);
      const container = portierContainer(spec);
      const { config } = portierRun(objects);
      expect(config.adminPort).toBeDefined();
      expect(config.adminHost, "the kubelet probes the pod's address").toBe("0.0.0.0");
      expect(container.readinessProbe.httpGet.path).toBe("/ready");
      expect(container.livenessProbe.httpGet.path).toBe("/health");
      // A native sidecar's startup probe gates the gateway's start: on /ready, which answers 200 only once the
      // bundle and the keys are loaded; a central pod waits for readiness before it gets traffic anyway.
      expect(container.startupProbe.httpGet.path).toBe(container.restartPolicy === "Always" ? "/ready" : "/health");
      // One slow answer on a loaded node does not take a healthy pod out of the endpoints.
      expect(container.readinessProbe.failureThreshold).toBeGreaterThan(1);
      for (const probe of [container.readinessProbe, container.livenessProbe, container.startupProbe])
        expect(containerPort(container, probe.httpGet.port)).toBe(config.adminPort);
      const annotations = one(objects, "Deployment").spec.template.metadata.annotations;
      expect(annotations["prometheus.io/scrape"]).toBe("true");
      expect(Number(annotations["prometheus.io/port"])).toBe(config.adminPort);
      expect(annotations["prometheus.io/path"]).toBe("/metrics");
      // --shutdown-delay covers the time the readiness probe takes to notice (period x failure threshold).
      if (config.shutdownDelay > 0)
        expect(config.shutdownDelay).toBeGreaterThanOrEqual(
          container.readinessProbe.periodSeconds * container.readinessProbe.failureThreshold,
        );
    });

    it("gives the pod more time than the whole stop takes", () => {
      const objects = shapes[shape]!.objects;
      const spec = podSpec(objects);
      const { config } = portierRun(objects);
      // A native sidecar is stopped after the other containers: their preStop waits come first.
      const before = portierContainer(spec).restartPolicy === "Always" ? spec.containers : [];
      const preStop = before.reduce((s, c) => s + (c.lifecycle?.preStop?.sleep?.seconds ?? 0), 0);
      expect(config.shutdownDelay).toBeLessThan(config.shutdownTimeout);
      expect(spec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(preStop + config.shutdownTimeout + 5);
    });

    it("runs every container as the image's non-root user, read-only, without capabilities", () => {
      const spec = podSpec(shapes[shape]!.objects);
      expect(spec.securityContext).toMatchObject({
        runAsNonRoot: true,
        runAsUser: UID,
        seccompProfile: { type: "RuntimeDefault" },
      });
      for (const c of [...spec.containers, ...(spec.initContainers ?? [])]) {
        expect(c.securityContext, c.name).toEqual({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ["ALL"] },
        });
        expect(c.resources.requests.cpu, c.name).toBeDefined();
        expect(c.resources.requests.memory, c.name).toBeDefined();
        expect(c.resources.limits.memory, c.name).toBeDefined();
      }
      const tmp = (portierContainer(spec).volumeMounts ?? []).find((m) => m.mountPath === "/tmp");
      expect(tmp, "a writable /tmp (the image's only writes)").toBeDefined();
      // A --directory-url download is written to /tmp whole before it replaces the index: room for the largest.
      const { config } = portierRun(shapes[shape]!.objects);
      const size = spec.volumes.find((v) => v.name === tmp!.name)?.emptyDir?.sizeLimit;
      if (config.directoryUrl) expect(quantityBytes(size ?? "0")).toBeGreaterThanOrEqual(config.directoryMaxBytes);
    });

    it("leaves the replica count to an autoscaler: the Deployment sets no replicas", () => {
      expect(one(shapes[shape]!.objects, "Deployment").spec.replicas).toBeUndefined();
    });

    it("a Prometheus Operator monitor scrapes /metrics on the admin port of Portier's pods", () => {
      const objects = shapes[shape]!.objects;
      const deployment = one(objects, "Deployment");
      const labels = deployment.spec.template.metadata.labels;
      const container = portierContainer(deployment.spec.template.spec);
      const { config } = portierRun(objects);
      const monitors = objects.filter((o) => o.kind === "ServiceMonitor" || o.kind === "PodMonitor");
      expect(monitors).toHaveLength(1);
      const monitor = monitors[0]!;
      const endpoints = monitor.spec.endpoints ?? monitor.spec.podMetricsEndpoints ?? [];
      expect(endpoints.map((e) => e.path)).toEqual(["/metrics"]);
      if (monitor.kind === "PodMonitor") {
        expect(matches(monitor.spec.selector.matchLabels, labels)).toBe(true);
        expect(containerPort(container, endpoints[0]!.port)).toBe(config.adminPort);
      } else {
        const service = objects.find(
          (o) => o.kind === "Service" && matches(monitor.spec.selector.matchLabels, o.metadata.labels ?? {}),
        );
        expect(service, "the Service the ServiceMonitor selects").toBeDefined();
        expect(matches(service!.spec.selector, labels)).toBe(true);
        const port = service!.spec.ports.find((p) => p.name === endpoints[0]!.port);
        expect(port, `the Service's ${endpoints[0]!.port} port`).toBeDefined();
        expect(containerPort(container, port!.targetPort)).toBe(config.adminPort);
      }
    });
  });

  it("central: the Service, PodDisruptionBudget, autoscaler and NetworkPolicy all select Portier's pods", () => {
    const objects = shapes["central"]!.objects;
    const deployment = one(objects, "Deployment", "portier");
    const labels = deployment.spec.template.metadata.labels as Record<string, string>;
    const container = portierContainer(deployment.spec.template.spec);
    const { config } = portierRun(objects);
    expect(config.host).toBe("0.0.0.0");
    const service = one(objects, "Service", "portier");
    expect(matches(service.spec.selector, labels)).toBe(true);
    const decision = service.spec.ports.find((p) => p.name === "decision")!;
    expect(containerPort(container, decision.targetPort)).toBe(config.port);
    const grpc = service.spec.ports.find((p) => p.name === "grpc")!;
    expect(containerPort(container, grpc.targetPort)).toBe(config.grpcPort);
    expect(matches(one(objects, "PodDisruptionBudget").spec.selector.matchLabels, labels)).toBe(true);
    expect(one(objects, "HorizontalPodAutoscaler").spec.scaleTargetRef).toEqual({
      apiVersion: "apps/v1",
      kind: "Deployment",
      name: "portier",
    });
    const policy = one(objects, "NetworkPolicy");
    expect(matches(policy.spec.podSelector.matchLabels, labels)).toBe(true);
    const toDecision = policy.spec.ingress.filter((r) => r.ports.some((p) => p.port === config.port));
    expect(toDecision.length).toBeGreaterThan(0);
    for (const rule of toDecision) {
      // Only named pods: no rule without a from (everyone), no address block, not Portier's own pods; a peer in
      // another namespace names its pods in the same entry (a namespaceSelector alone admits the whole namespace).
      expect(rule.from?.length).toBeGreaterThan(0);
      for (const peer of rule.from ?? []) {
        expect(peer.ipBlock).toBeUndefined();
        expect(Object.keys(peer.podSelector?.matchLabels ?? {}).length).toBeGreaterThan(0);
        expect(matches(peer.podSelector?.matchLabels ?? {}, labels)).toBe(false);
      }
    }
    // An ingress controller in a namespace of its own reaches the decision port (issue 37: it was blocked).
    const crossNamespace = toDecision.flatMap((r) => r.from ?? []).filter((p) => p.namespaceSelector);
    expect(crossNamespace.length).toBeGreaterThan(0);
    const admin = service.spec.ports.find((p) => p.name === "admin")!;
    expect(containerPort(container, admin.targetPort)).toBe(config.adminPort);
    const volume = deployment.spec.template.spec.volumes.find((v) => v.name === "directory");
    const directory = one(objects, "ConfigMap", volume?.configMap?.name ?? "");
    expect(JSON.parse(directory.data?.["directory.json"] ?? "")).toEqual(
      JSON.parse(readFileSync(join(PROJECT_ROOT, "data", "sample", "directory.json"), "utf8")),
    );
  });

  it("sidecar: Portier decides on loopback only, and the pod's nginx calls it there", () => {
    const objects = shapes["sidecar"]!.objects;
    const spec = podSpec(objects);
    const container = portierContainer(spec);
    const { config } = portierRun(objects);
    expect(config.host).toBe("127.0.0.1");
    expect(container.restartPolicy, "a native sidecar: up before nginx, stopped after it").toBe("Always");
    expect((container.ports ?? []).map((p) => p.containerPort)).not.toContain(config.port);
    const nginx = spec.containers.find((c) => c.name === "nginx")!;
    const confMap = one(objects, "ConfigMap", spec.volumes.find((v) => v.name === "nginx-conf")?.configMap?.name);
    const conf = confMap.data?.["default.conf"] ?? "";
    expect(conf).toContain(`proxy_pass http://127.0.0.1:${config.port}/forward-auth/nginx;`);
    // The shipped gateway example, with only the log, the API address and the header comment changed.
    const shipped = readFileSync(join(PROJECT_ROOT, "docs", "gateways", "nginx.conf"), "utf8");
    const body = (s: string) =>
      s
        .slice(s.indexOf("log_format"))
        .split("\n")
        .filter((l) => !/access_log|proxy_pass http:\/\/(127\.0\.0\.1:9000|api\.)|# The API behind/.test(l))
        .join("\n");
    expect(body(conf)).toBe(body(shipped));
    const nginxPort = nginx.ports?.[0]?.containerPort;
    expect(nginxPort).toBe(Number(/listen (\d+);/.exec(conf)?.[1]));
    const service = one(objects, "Service", "gateway");
    expect(containerPort(nginx, service.spec.ports[0]?.targetPort ?? "")).toBe(nginxPort);
    const policy = one(objects, "NetworkPolicy");
    const ports = policy.spec.ingress.flatMap((r) => r.ports.map((p) => p.port));
    expect(ports).not.toContain(config.port);
    expect(dirname(config.bundleUrl ?? "")).toMatch(/^http/);
    // The pulled bundle must carry a valid signature: the key is mounted from a ConfigMap and parses
    // (--check-config above loads it).
    expect(config.verificationKey).toBeDefined();
  });
});
