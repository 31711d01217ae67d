/**
 * The exit codes, ports and defaults the documentation states, read back from the program (issue 37 item 4):
 * production.md's start-up failure table against real start-up failures, the issuer's port the docs use against
 * `portier issuer`'s default, and README Tour 3's port-forward and /ready against the manifests' admin port.
 */
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import YAML from "yaml";
import { describe, expect, it } from "vitest";
import { EXIT } from "../../src/cli/exit-codes.js";
import { SPEC as ISSUER_SPEC } from "../../src/cli/commands/issuer.js";
import { OPTIONS } from "../../src/service/config.js";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { PORTIER_BIN } from "../support/portier-bin.js";

/** The issuer's default port, as its help prints it. */
const DEFAULT_ISSUER_PORT = Number(ISSUER_SPEC.options.port.default);

const doc = (path: string) => readFileSync(join(PROJECT_ROOT, path), "utf8");

function portier(...args: string[]): Promise<{ status: number | null; stderr: string }> {
  const child = spawn(process.execPath, [PORTIER_BIN, ...args], { cwd: PROJECT_ROOT, timeout: 30_000 });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  child.stdout.resume();
  return new Promise((resolve) => child.once("close", (status) => resolve({ status, stderr })));
}

/** The start-up failure table of production.md: the failure's first words and its documented exit code. */
function failureTable(): Map<string, number> {
  const text = doc("docs/operating/production.md");
  const start = text.indexOf("| Failure | Line (after `portier serve: `) | Exit |");
  expect(start).toBeGreaterThan(0);
  const rows = text.slice(start).split("\n\n")[0]!.split("\n").slice(2);
  return new Map(
    rows.map((r) => {
      const cells = r.trim().replace(/^\| /, "").replace(/ \|$/, "").split(" | ");
      return [cells[0]!, Number(cells.at(-1))];
    }),
  );
}

const BASE = ["serve", "--issuer", "https://auth.example.org"];

describe("the documented exit codes are the program's", () => {
  it("every start-up failure in production.md exits with the code the CLI uses for one", () => {
    const table = failureTable();
    expect(table.size).toBeGreaterThan(5);
    for (const [failure, code] of table) expect(code, failure).toBe(EXIT.error);
  });

  it.each([
    ["bundle missing", ["--bundle", "/nonexistent/bundle.tar.gz", "--directory", "data/sample/directory.json"]],
    ["directory or JWKS file missing", ["--directory", "/nonexistent/directory.json"]],
    ["bad or missing option", ["--port", "70000", "--directory", "data/sample/directory.json"]],
  ])(
    "%s: the documented exit code",
    async (failure, args) => {
      const documented = [...failureTable()].find(([f]) => f.startsWith(failure))?.[1];
      expect(documented, failure).toBeDefined();
      const r = await portier(...BASE, ...args);
      expect(r.stderr).toMatch(/^portier serve: /);
      expect(r.status).toBe(documented);
    },
    60_000,
  );

  it("port in use: the documented exit code", async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", r));
    const port = (blocker.address() as { port: number }).port;
    try {
      const r = await portier(...BASE, "--directory", "data/sample/directory.json", "--port", String(port));
      expect(r.stderr).toContain("the address is in use");
      expect(r.status).toBe(failureTable().get("port in use"));
    } finally {
      blocker.close();
    }
  }, 60_000);
});

describe("the documented ports and defaults are the program's", () => {
  it("portier issuer's default port is the one every example and portier dev use", () => {
    const used = [
      "README.md",
      "docs/operating/configure.md",
      "docs/operating/shadow-policy.md",
      "docs/review/README.md",
    ]
      .flatMap((f) => [...doc(f).matchAll(/portier issuer --port (\d+)/g)].map((m) => Number(m[1])))
      .concat([...doc("src/issuer/README.md").matchAll(/portier issuer \[--port (\d+)\]/g)].map((m) => Number(m[1])));
    expect(used.length).toBeGreaterThan(2);
    expect(new Set(used)).toEqual(new Set([DEFAULT_ISSUER_PORT]));
    expect(doc("docs/reference/commands.md")).toContain(
      `--issuer-port N    the issuer's port (0 = any free port) (default: ${DEFAULT_ISSUER_PORT})`,
    );
  });

  it("README Tour 3 asks /ready on the Service port that reaches the admin port the manifests configure", () => {
    const readme = doc("README.md");
    const tour = readme.slice(readme.indexOf("## Tour 3"), readme.indexOf("## Layout"));
    const forward = /port-forward service\/portier ((?:\d+:\d+ ?)+)/.exec(tour)![1]!.trim().split(" ");
    const ready = Number(/curl -s http:\/\/127\.0\.0\.1:(\d+)\/ready/.exec(tour)![1]);
    const service = YAML.parse(doc("deploy/kubernetes/central/service.yaml")) as {
      spec: { ports: { name: string; port: number }[] };
    };
    const config = JSON.parse(doc("deploy/kubernetes/base/portier.json")) as { adminPort: number; port: number };
    const local = new Map(forward.map((f) => [Number(f.split(":")[0]), Number(f.split(":")[1])]));
    const remote = local.get(ready);
    expect(remote, "the /ready port is forwarded").toBeDefined();
    expect(service.spec.ports.find((p) => p.port === remote)?.name).toBe("admin");
    expect(remote).toBe(config.adminPort);
    expect(tour).toContain(`apply -k deploy/kubernetes/central`);
  });

  it("the image's documented ports are the manifests' configuration", () => {
    const row = /\| Ports \| (\d+) decisions, (\d+) admin .*?, (\d+) gRPC/.exec(
      doc("docs/operating/container-and-kubernetes.md"),
    )!;
    const config = JSON.parse(doc("deploy/kubernetes/base/portier.json")) as { adminPort: number; port: number };
    expect([Number(row[1]), Number(row[2])]).toEqual([config.port, config.adminPort]);
    expect(doc("deploy/kubernetes/central/deployment.yaml")).toContain(`PORTIER_GRPC_PORT, value: "${row[3]}"`);
    expect((OPTIONS.port.schema as { default: number }).default).toBe(config.port);
  });
});
