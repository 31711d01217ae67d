/**
 * Test helpers: keys and a JWKS made in the test, signed tokens of both flows, a directory file, and the
 * service started from `portier serve` arguments either in this process (startService, on 127.0.0.1:0, its
 * log lines captured) or as the real `portier serve` child process (URL read from its "listening" line).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { JWK } from "jose";
import { loadConfig, startService, type RunningService, type ServiceConfig } from "../../src/service/index.js";
import type { DecisionTracer } from "../../src/service/tracing/decision-tracer.js";
import { makeKey, sign as signToken, type TestKey } from "../support/tokens.js";

export const PROJECT_ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const ISSUER = "https://auth.test.example";
export { TENANT_A, TENANT_B } from "../support/sample.js";
export { until } from "../support/until.js";
import { TENANT_A } from "../support/sample.js";
import { PORTIER_BIN } from "../support/portier-bin.js";
import { stopChild } from "../support/stop-child.js";
import { json, type DecideJson } from "../support/answers.js";
export const TEACHER = "11111111-1111-4111-8111-111111111111";
export const ADULT_STUDENT = "22222222-2222-4222-8222-222222222222";
export const UNSYNCED = "33333333-3333-4333-8333-333333333333";

/** A signing key and the JWKS that publishes it. */
export interface Keys extends TestKey {
  jwks: { keys: JWK[] };
}

export async function makeKeys(kid = "k1"): Promise<Keys> {
  const key = await makeKey(kid);
  return { ...key, jwks: { keys: [key.publicJwk] } };
}

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "portier-svc-"));
}

/** An access token from ISSUER, valid for opts.expSec (default 600 s; negative: expired). */
export function sign(
  keys: Keys,
  claims: Record<string, unknown>,
  opts: { kid?: string; expSec?: number } = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return signToken(
    { iss: ISSUER, iat: now, exp: now + (opts.expSec ?? 600), ...claims },
    keys,
    opts.kid ? { kid: opts.kid } : {},
  );
}

export function userToken(keys: Keys, sub: string, extra: Record<string, unknown> = {}): Promise<string> {
  return sign(keys, {
    sub,
    client_id: "web",
    tenant_id: TENANT_A,
    auth_time: Math.floor(Date.now() / 1000),
    idp: "local",
    scope: ["openid", "apiclients"],
    amr: ["pwd"],
    ...extra,
  });
}

export function machineToken(keys: Keys, extra: Record<string, unknown> = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return sign(keys, {
    aud: "apiclients",
    client_id: "machine",
    tenant_id: TENANT_A,
    scope: "apiclients",
    nbf: now - 5,
    ...extra,
  });
}

export function writeDirectory(dir: string, records: unknown[], name = "directory.json"): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(records));
  return file;
}

export const RECORDS = [
  { sub: TEACHER, tenant_id: TENANT_A, roles: ["enseignant_jeune"] },
  { sub: ADULT_STUDENT, tenant_id: TENANT_A, roles: ["Élève adulte"] },
];

/** The issuer, a JWKS file of `keys` and a directory of `records` (in a new temp folder), as `serve` arguments. */
export function sampleServeArgs(keys: Keys, records: unknown[] = RECORDS): string[] {
  const dir = tempDir();
  const jwks = join(dir, "jwks.json");
  writeFileSync(jwks, JSON.stringify(keys.jwks));
  return ["--issuer", ISSUER, "--jwks", jwks, "--directory", writeDirectory(dir, records)];
}

export interface ServiceProcess {
  url: string;
  proc: ChildProcess;
  output(): string;
  stderr(): string;
  stop(): Promise<void>;
}

/** The service in this process: what a test needs of it is its URL, its log lines and stopping it. */
export interface InProcessService {
  url: string;
  service: RunningService;
  /** The JSON log lines, as `portier serve` would print them on stdout. */
  output(): string;
  /** Always empty: kept so that a test reads the same whether the service runs here or as a process. */
  stderr(): string;
  stop(): Promise<void>;
}

/** The configuration of `portier serve ARGS` (flags, then `env`, then --config): one worker on 127.0.0.1:0. */
export function serveConfig(args: string[], env: Record<string, string> = {}): ServiceConfig {
  return loadConfig(["--port", "0", "--host", "127.0.0.1", "--workers", "1", ...args], { ...process.env, ...env });
}

/**
 * `portier serve ARGS` in this process: the same configuration (flags, then `env`, then --config) and the same
 * startService, listening on 127.0.0.1:0; its logger keeps its level and redaction, its lines go to output().
 * A start-up or configuration failure rejects with the message `portier serve` would print.
 */
export async function serveInProcess(
  args: string[],
  env: Record<string, string> = {},
  options: { tracer?: DecisionTracer } = {},
): Promise<InProcessService> {
  let out = "";
  const service = await startService(serveConfig(args, env), {
    logDestination: { write: (line: string) => void (out += line) },
    ...options,
  });
  let stopped: Promise<void> | undefined;
  return {
    url: service.url,
    service,
    output: () => out,
    stderr: () => "",
    stop: () => (stopped ??= service.close(1000)),
  };
}

export function startServe(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<ServiceProcess> {
  const proc = spawn(
    process.execPath,
    [PORTIER_BIN, "serve", "--port", "0", "--host", "127.0.0.1", "--workers", "1", ...args],
    {
      cwd: PROJECT_ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  let err = "";
  const stop = () => stopChild(proc, 5000).then(() => undefined);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`serve did not start in time\n${out}\n${err}`));
    }, timeoutMs);
    proc.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      for (const line of out.split("\n")) {
        try {
          const rec = JSON.parse(line) as { msg?: string; url?: string };
          if (rec.msg === "listening" && rec.url) {
            clearTimeout(timer);
            resolve({ url: rec.url, proc, output: () => out, stderr: () => err, stop });
            return;
          }
        } catch {
          /* not a JSON line yet */
        }
      }
    });
    proc.stderr.on("data", (d: Buffer) => (err += d.toString()));
    proc.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}\n${out}\n${err}`));
    });
  });
}

/** Runs serve expecting it to exit; returns code and output. */
export function runServe(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawn(process.execPath, [PORTIER_BIN, "serve", ...args], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  proc.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  proc.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => proc.kill("SIGKILL"), 30_000);
  // "close", not "exit": the output is read to its end before it is returned (a loaded machine may still hold some
  // of it in the pipe when the process exits).
  return new Promise((resolve) =>
    proc.once("close", (code) => (clearTimeout(timer), resolve({ code, stdout, stderr }))),
  );
}

export function decide<T = DecideJson>(url: string, body: unknown): Promise<{ status: number; json: T }> {
  return decideThrough<T>((path, init) => fetch(`${url}${path}`, init), body);
}

/** POST /decide with `body` (a string is sent as is) through `fetchPath` (a socket's or an in-memory one's). */
export async function decideThrough<T = DecideJson>(
  fetchPath: (path: string, init: RequestInit) => Promise<Response>,
  body: unknown,
): Promise<{ status: number; json: T }> {
  const res = await fetchPath("/decide", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, json: await json<T>(res) };
}
