/**
 * docs/reference/metrics.md from the registry of a real service: `portier serve` started in this process with
 * every source a deployment can have (a bundle, a JWKS file, a directory, the gRPC port), asked a few decisions so
 * that labelled series appear, then scraped at GET /metrics. Every series the service exposes is listed with its
 * type, labels and help, whichever module registers it.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { exportJWK, generateKeyPair } from "jose";
import { loadConfig, startService } from "../../src/service/index.js";
import { GENERATED_NOTE, cell } from "./markdown.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BUNDLE = join(ROOT, "build/bundle.tar.gz");
const DIRECTORY = join(ROOT, "data/sample/directory.json");

interface Family {
  name: string;
  type: string;
  help: string;
  labels: Set<string>;
}

/** The metric families of a Prometheus text exposition, with the label names their samples carry. */
function families(text: string): Family[] {
  const byName = new Map<string, Family>();
  const family = (name: string) => {
    let f = byName.get(name);
    if (!f) byName.set(name, (f = { name, type: "", help: "", labels: new Set() }));
    return f;
  };
  for (const line of text.split("\n")) {
    const meta = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
    if (meta) {
      const f = family(meta[2]!);
      if (meta[1] === "HELP") f.help = meta[3]!;
      else f.type = meta[3]!;
      continue;
    }
    const sample = /^([a-zA-Z_:][\w:]*)\{([^}]*)\}/.exec(line);
    if (!sample) continue;
    const name = sample[1]!;
    const base = [...byName.keys()].find(
      (n) => name === n || (name.startsWith(n) && /^_(bucket|sum|count)$/.test(name.slice(n.length))),
    );
    if (!base) continue;
    for (const m of sample[2]!.matchAll(/(\w+)="/g)) if (m[1] !== "le") family(base).labels.add(m[1]!);
  }
  return [...byName.values()];
}

async function scrape(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "portier-metrics-reference-"));
  try {
    const { publicKey } = await generateKeyPair("ES256");
    const jwks = join(dir, "jwks.json");
    writeFileSync(jwks, JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: "k", alg: "ES256" }] }));
    writeFileSync(join(dir, "scim-token"), "reference-token");
    const config = loadConfig(
      // The bundle is its own shadow candidate, so that the shadow series are listed too; SCIM is on (a journal
      // in the temp folder) for its series.
      [
        "--issuer",
        "https://auth.example",
        "--jwks",
        jwks,
        "--bundle",
        BUNDLE,
        "--shadow-bundle",
        BUNDLE,
        "--directory",
        DIRECTORY,
        "--scim-token-file",
        join(dir, "scim-token"),
        "--scim-journal",
        join(dir, "scim.journal"),
      ],
      { PORTIER_PORT: "0", PORTIER_GRPC_PORT: "0", PORTIER_WORKERS: "1", PORTIER_LOG_LEVEL: "silent" },
    );
    const service = await startService(config, { logDestination: { write: () => undefined } });
    try {
      await service.verifier.ready();
      for (const token of ["", "not-a-token"])
        await fetch(`${service.url}/decide`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ method: "GET", path: "/v1/roles", token }),
        });
      await fetch(`${service.url}/forward-auth/nginx`, {
        headers: { "X-Original-Method": "GET", "X-Original-URI": "/v1/roles" },
      });
      // A request refused before any decision (portier_requests_rejected_total's labels).
      await fetch(`${service.url}/decide`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{",
      });
      const res = await fetch(`${service.url}/metrics`);
      if (!res.ok) throw new Error(`GET /metrics answered ${res.status}`);
      return await res.text();
    } finally {
      await service.close(1000);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** With labels for Portier's series; without for the runtime's, whose labels come and go with what is active. */
function table(rows: Family[], withLabels: boolean): string[] {
  const labels = (f: Family) =>
    [...f.labels]
      .sort()
      .map((l) => `\`${l}\``)
      .join(", ");
  return withLabels
    ? [
        "| Metric | Type | Labels | What it counts |",
        "|---|---|---|---|",
        ...rows.map((f) => `| \`${f.name}\` | ${f.type} | ${labels(f)} | ${cell(f.help)} |`),
      ]
    : [
        "| Metric | Type | What it counts |",
        "|---|---|---|",
        ...rows.map((f) => `| \`${f.name}\` | ${f.type} | ${cell(f.help)} |`),
      ];
}

export async function metricsReference(): Promise<string> {
  const all = families(await scrape()).sort((a, b) => a.name.localeCompare(b.name));
  const portier = all.filter((f) => f.name.startsWith("portier_"));
  if (portier.length === 0) throw new Error("GET /metrics listed no portier_ series");
  const runtime = all.filter((f) => !f.name.startsWith("portier_"));
  return [
    "# Metrics",
    "",
    GENERATED_NOTE,
    "",
    "`GET /metrics` (on the `--admin-port` when one is set) answers in the Prometheus text format. With",
    "`--workers N` every scrape answers for the whole service: counters and histograms add up across workers,",
    "`portier_keys_ready`, `portier_directory_size` and the `*_last_success_timestamp_seconds` of the policy, the",
    "directory and the keys take the lowest (stalest) worker's value, the `*_last_*_failed` flags and the decision",
    "log's last accepted upload the highest. `*_total` series are counters. A series whose help says",
    '"Deprecated" was renamed: it answers as its new name for one more release, then goes; move dashboards and',
    "alerts to the new name. Example alerting rules: [alerts.yaml](../operating/alerts.yaml); a dashboard:",
    "[grafana-dashboard.json](../operating/grafana-dashboard.json).",
    "",
    "## Portier",
    "",
    ...table(portier, true),
    "",
    "## Node.js process",
    "",
    "The process and runtime series of prom-client's default collectors.",
    "",
    ...table(runtime, false),
    "",
  ].join("\n");
}
