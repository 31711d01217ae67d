/**
 * Real gateways for the end-to-end tests: finds the nginx and caddy binaries, fills the config
 * templates of test/e2e/gateways/ into a fresh temp dir, runs the gateway in the foreground on
 * 127.0.0.1 and a free port with every path (pid, logs, temp, storage) in that dir, and stops it.
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
  const dirs = [...(process.env["PATH"] ?? "").split(delimiter).filter(Boolean), "/usr/sbin", "/usr/local/sbin", "/sbin", "/usr/bin", "/usr/local/bin"];
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
    PORTIER_PORT: String(opts.authPort),
    UPSTREAM_PORT: String(opts.upstreamPort),
    // As root, nginx would switch its workers to "nobody"; keep them as the current user instead.
    USER_DIRECTIVE: process.getuid?.() === 0 ? `user ${userInfo().username};` : "",
  };

  let proc: Managed;
  let logFiles: string[];
  if (kind === "nginx") {
    for (const sub of ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]) mkdirSync(join(dir, sub));
    const conf = join(dir, "nginx.conf");
    writeFileSync(conf, fill(readFileSync(join(TEMPLATES, "nginx.conf.template"), "utf8"), values));
    logFiles = [join(dir, "error.log")];
    // -p: prefix for any relative path; -e: start-up error log before the config is read.
    proc = startProcess("nginx", binary, ["-p", `${dir}/`, "-c", conf, "-e", join(dir, "error.log")], { cwd: dir });
  } else {
    const conf = join(dir, "Caddyfile");
    writeFileSync(conf, fill(readFileSync(join(TEMPLATES, "Caddyfile.template"), "utf8"), values));
    logFiles = [join(dir, "caddy.log")];
    const env = { ...process.env, HOME: dir, XDG_DATA_HOME: join(dir, "data"), XDG_CONFIG_HOME: join(dir, "config") };
    proc = startProcess("caddy", binary, ["run", "--config", conf, "--adapter", "caddyfile"], { cwd: dir, env });
  }

  const logs = () => [`--- ${kind} output ---`, proc.output(), ...logFiles.map((f) => `--- ${f} ---\n${readIfExists(f)}`)].join("\n");
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
