/**
 * Real gateways for the end-to-end tests: finds the nginx and caddy binaries, takes the shipped configs of
 * docs/gateways/ with only their ports (and nginx's log directory) filled in, wraps them in a test-only
 * main config (test/e2e/gateways/: pid, temp dirs, loopback) in a fresh temp dir, runs the gateway in the
 * foreground on 127.0.0.1 and a free port, and stops it. `shippedConfig` gives the same filled text for
 * the gateways that are not installed here (Traefik, Envoy), whose request shapes the tests reproduce.
 */
import { accessSync, constants, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { LOOPBACK, freePort, waitForPort } from "./net.js";
import { startProcess, type Managed } from "./process.js";

export type GatewayKind = "nginx" | "caddy";

/** Temp dirs of gateways not yet stopped, removed at exit if a run is interrupted. */
const liveDirs = new Set<string>();
process.once("exit", () => {
  for (const dir of liveDirs) rmSync(dir, { recursive: true, force: true });
});

const TEMPLATES = fileURLToPath(new URL("../gateways/", import.meta.url));
export const SHIPPED_DIR = fileURLToPath(new URL("../../../docs/gateways/", import.meta.url));

export type ShippedFile = "nginx.conf" | "Caddyfile" | "traefik.yml" | "envoy.yaml";

export interface ShippedValues {
  /** The gateway's own port. */
  port: number;
  authPort: number;
  upstreamPort: number;
  /** nginx's log directory. */
  dir?: string;
}

/**
 * The defaults written in each shipped config and what the tests put in their place. Each one must occur in
 * the file, so a changed default fails here instead of the tests running something else.
 */
function shippedReplacements(file: ShippedFile, v: ShippedValues): Array<[string, string]> {
  switch (file) {
    case "nginx.conf":
      return [
        ["listen 8080;", `listen ${LOOPBACK}:${v.port};`],
        ["127.0.0.1:8181", `${LOOPBACK}:${v.authPort}`],
        ["127.0.0.1:9000", `${LOOPBACK}:${v.upstreamPort}`],
        ["/var/log/nginx/", `${v.dir}/`],
      ];
    case "Caddyfile":
      return [
        ["http://:8080", `http://${LOOPBACK}:${v.port}`],
        ["127.0.0.1:8181", `${LOOPBACK}:${v.authPort}`],
        ["127.0.0.1:9000", `${LOOPBACK}:${v.upstreamPort}`],
      ];
    case "traefik.yml":
      return [
        ["127.0.0.1:8181", `${LOOPBACK}:${v.authPort}`],
        ["127.0.0.1:9000", `${LOOPBACK}:${v.upstreamPort}`],
      ];
    case "envoy.yaml":
      return [
        ["port_value: 8080", `port_value: ${v.port}`],
        ["port_value: 8181", `port_value: ${v.authPort}`],
        ["port_value: 9000", `port_value: ${v.upstreamPort}`],
        ["127.0.0.1:8181", `${LOOPBACK}:${v.authPort}`],
      ];
  }
}

/** A shipped config of docs/gateways/ with only its ports (and nginx's log directory) filled in. */
export function shippedConfig(file: ShippedFile, values: ShippedValues): string {
  let text = readFileSync(join(SHIPPED_DIR, file), "utf8");
  for (const [from, to] of shippedReplacements(file, values)) {
    if (!text.includes(from))
      throw new Error(`docs/gateways/${file}: the default "${from}" the tests replace is not in the file`);
    text = text.split(from).join(to);
  }
  return text;
}

export const INSTALL_HINT: Record<GatewayKind, string> = {
  nginx: "apt-get install nginx-light (Debian package with the auth_request module)",
  caddy: "apt-get install caddy (Caddy 2, Debian bookworm or later)",
};

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The binary's path: PATH first, then the sbin directories PATH often lacks for non-root users. */
export function findBinary(name: GatewayKind): string | undefined {
  const dirs = [
    ...(process.env["PATH"] ?? "").split(delimiter).filter(Boolean),
    "/usr/sbin",
    "/usr/local/sbin",
    "/sbin",
    "/usr/bin",
    "/usr/local/bin",
  ];
  for (const dir of dirs) {
    const candidate = join(dir, name);
    if (executable(candidate)) return candidate;
  }
  return undefined;
}

export interface GatewayOptions {
  /** Port of the forward-auth server (Portier, or the harness's fake). */
  authPort: number;
  upstreamPort: number;
  startTimeoutMs?: number;
}

export interface RunningGateway {
  kind: GatewayKind;
  url: string;
  port: number;
  dir: string;
  /** Gateway logs (process output and log files) for failure messages. */
  logs(): string;
  stop(): Promise<void>;
}

function fill(template: string, values: Record<string, string>): string {
  const text = template.replace(/@([A-Z_]+)@/g, (whole, key: string) => {
    const value = values[key];
    if (value === undefined) throw new Error(`gateway template: no value for ${whole}`);
    return value;
  });
  return text;
}

function readIfExists(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

export async function startGateway(kind: GatewayKind, opts: GatewayOptions): Promise<RunningGateway> {
  const binary = findBinary(kind);
  if (!binary) throw new Error(`${kind} not found (install: ${INSTALL_HINT[kind]})`);
  const dir = mkdtempSync(join(tmpdir(), `portier-e2e-${kind}-`));
  liveDirs.add(dir);
  try {
    return await launch(kind, binary, dir, opts);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    liveDirs.delete(dir);
    throw err;
  }
}

async function launch(kind: GatewayKind, binary: string, dir: string, opts: GatewayOptions): Promise<RunningGateway> {
  const port = await freePort();
  const values: Record<string, string> = {
    DIR: dir,
    PORT: String(port),
    // As root, nginx would switch its workers to "nobody"; keep them as the current user instead.
    USER_DIRECTIVE: process.getuid?.() === 0 ? `user ${userInfo().username};` : "",
  };

  let proc: Managed;
  let logFiles: string[];
  const shipped: ShippedValues = { port, authPort: opts.authPort, upstreamPort: opts.upstreamPort, dir };
  if (kind === "nginx") {
    for (const sub of ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]) mkdirSync(join(dir, sub));
    const conf = join(dir, "nginx.conf");
    writeFileSync(join(dir, "portier.conf"), shippedConfig("nginx.conf", shipped));
    writeFileSync(conf, fill(readFileSync(join(TEMPLATES, "nginx-main.conf.template"), "utf8"), values));
    logFiles = [join(dir, "error.log"), join(dir, "portier.log")];
    // -p: prefix for any relative path; -e: start-up error log before the config is read.
    proc = startProcess("nginx", binary, ["-p", `${dir}/`, "-c", conf, "-e", join(dir, "error.log")], { cwd: dir });
  } else {
    const conf = join(dir, "Caddyfile");
    writeFileSync(join(dir, "portier.Caddyfile"), shippedConfig("Caddyfile", shipped));
    writeFileSync(conf, fill(readFileSync(join(TEMPLATES, "Caddyfile-main.template"), "utf8"), values));
    logFiles = [join(dir, "caddy.log")];
    const env = { ...process.env, HOME: dir, XDG_DATA_HOME: join(dir, "data"), XDG_CONFIG_HOME: join(dir, "config") };
    proc = startProcess("caddy", binary, ["run", "--config", conf, "--adapter", "caddyfile"], { cwd: dir, env });
  }

  const logs = () =>
    [`--- ${kind} output ---`, proc.output(), ...logFiles.map((f) => `--- ${f} ---\n${readIfExists(f)}`)].join("\n");
  const stop = async () => {
    await proc.stop();
    rmSync(dir, { recursive: true, force: true });
    liveDirs.delete(dir);
  };
  try {
    await waitForPort(port, {
      timeoutMs: opts.startTimeoutMs ?? 15_000,
      what: `${kind} (${binary})`,
      failed: () => {
        const how = proc.exited();
        return how === undefined ? undefined : `${how} during start-up\n${logs()}`;
      },
    });
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return { kind, url: `http://${LOOPBACK}:${port}`, port, dir, logs, stop };
}
