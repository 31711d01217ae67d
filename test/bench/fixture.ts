/**
 * What `make profile` (profile.ts) and the latency benchmark (latency.ts) drive, the way the service benchmark
 * (service.ts) does: 100 users' RS256 tokens (each verified once, then cached by Portier), a directory of those
 * users, the wrk loads of POST /decide and GET /forward-auth/nginx (path ids never repeating), Portier `serve`
 * from a compiled tree (one worker, decision log on, to /dev/null), the same-shaped server given Portier's own
 * answers, and a base commit's source compiled beside this tree (git archive + tsc, as hot-path.ts does).
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, openSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer, type Server as HttpServer } from "node:http";
import { fileURLToPath } from "node:url";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { BENCH_TENANT, benchSub } from "./directory-probe.js";
import type { Load } from "./wrk.js";
import { freePort } from "../support/free-port.js";
import { sealNdjson } from "../support/directory-files.js";
import { pinned } from "./pin.js";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const SHAPED = fileURLToPath(new URL("./same-shaped-server.mjs", import.meta.url));
export const ISSUER = "https://auth.bench.example";
export const PATH_TEMPLATE = "/v2/ORG001/elevesJeunes/{id}/absences";
export const USERS = 100;

export interface Fixture {
  dir: string;
  jwksFile: string;
  directoryFile: string;
  tokens: string[];
  /** Each token's claims, in the same order. */
  claims: Record<string, unknown>[];
}

/**
 * Keys, the JWKS file, one token per user and the directory of those users, in a fresh temporary folder. User k
 * is the generated directory's record `userIndex(k)` (directory-probe.ts), so that a larger directory holds them.
 */
export async function createFixture(userIndex: (k: number) => number = (k) => 3 * k): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), "portier-fixture-"));
  const { privateKey, publicKey } = await generateKeyPair("RS256");
  const jwksFile = join(dir, "jwks.json");
  writeFileSync(
    jwksFile,
    JSON.stringify({ keys: [{ ...(await exportJWK(publicKey)), kid: "b1", alg: "RS256", use: "sig" }] }),
  );
  const now = Math.floor(Date.now() / 1000);
  const subs = Array.from({ length: USERS }, (_, k) => benchSub(userIndex(k)));
  const claims = subs.map((sub) => ({
    iss: ISSUER,
    sub,
    client_id: "web",
    tenant_id: BENCH_TENANT,
    auth_time: now,
    idp: "local",
    scope: ["openid", "apiclients"],
    amr: ["pwd"],
    iat: now,
    exp: now + 3600,
  }));
  const tokens = await Promise.all(
    claims.map((c) => new SignJWT(c).setProtectedHeader({ alg: "RS256", kid: "b1", typ: "at+jwt" }).sign(privateKey)),
  );
  const directoryFile = join(dir, "directory.ndjson");
  writeFileSync(
    directoryFile,
    sealNdjson(subs.map((sub) => JSON.stringify({ sub, tenant_id: BENCH_TENANT, roles: ["enseignant_jeune"] }))),
  );
  return { dir, jwksFile, directoryFile, tokens, claims };
}

/** GET /forward-auth/nginx as nginx's auth_request sends it, tokens in turn. */
export const forwardAuthLoad = (f: Fixture, unique = true): Load => ({
  method: "GET",
  target: "/forward-auth/nginx",
  pathTemplate: PATH_TEMPLATE,
  unique,
  variants: f.tokens.map((token) => ({
    headers: { "x-original-method": "GET", "x-original-uri": "__PATH__", authorization: `Bearer ${token}` },
  })),
});

/** POST /decide with a JSON body, tokens in turn. */
export const decideLoad = (f: Fixture, unique = true): Load => ({
  method: "POST",
  target: "/decide",
  pathTemplate: PATH_TEMPLATE,
  unique,
  variants: f.tokens.map((token) => ({
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ method: "GET", path: "__PATH__", token }),
  })),
});

const PROTOS = join(ROOT, "src", "service", "grpc", "protos");

/** The CheckRequests Envoy's ext_authz sends for a GET of `path`, one per token (ghz's data, `-D`). */
export function checkRequests(tokens: string[], path: string): unknown[] {
  return tokens.map((token) => ({
    attributes: {
      request: {
        http: {
          id: "1",
          method: "GET",
          path,
          host: "api.example",
          scheme: "http",
          protocol: "HTTP/1.1",
          headers: {
            ":authority": "api.example",
            ":method": "GET",
            ":path": path,
            ":scheme": "http",
            authorization: `Bearer ${token}`,
          },
        },
      },
    },
  }));
}

/**
 * ghz's arguments for Authorization.Check on Portier's protos: `load` (rate, concurrency, duration), the data file,
 * JSON out.
 */
export function ghzCheckArgs(address: string, specFile: string, load: string[]): string[] {
  return [
    "--insecure",
    "--import-paths",
    PROTOS,
    "--proto",
    "envoy/service/auth/v3/external_auth.proto",
    "--call",
    "envoy.service.auth.v3.Authorization.Check",
    ...load,
    "-D",
    specFile,
    "--format",
    "json",
    address,
  ];
}

export interface Server {
  name: string;
  url: string;
  child: ChildProcess;
}

/**
 * Starts `cmd args` (`{port}` replaced by a free port; pinned where BENCH_SERVER_CPUS says), stdout to /dev/null,
 * and waits for `readyPath` to answer 2xx.
 */
export async function startServer(
  name: string,
  cmd: string,
  args: string[],
  opts: { readyPath: string; env?: Record<string, string>; cwd?: string },
): Promise<Server> {
  const port = await freePort();
  const [bin, argv] = pinned(
    "server",
    cmd,
    args.map((a) => a.replace("{port}", String(port))),
  );
  const child = spawn(bin, argv, {
    cwd: opts.cwd ?? ROOT,
    stdio: ["ignore", openSync("/dev/null", "w"), "inherit"],
    env: { ...process.env, ...opts.env },
  });
  const url = `http://127.0.0.1:${port}`;
  const end = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name}: exited (${child.exitCode}) before it was ready`);
    const ok = await fetch(`${url}${opts.readyPath}`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { name, url, child };
    if (Date.now() > end) throw new Error(`${name}: ${url}${opts.readyPath} did not answer within 120 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Starts `node [nodeArgs] script args` with startServer. */
export function startNode(
  name: string,
  nodeArgs: string[],
  script: string,
  args: string[],
  opts: { readyPath: string; env?: Record<string, string>; cwd?: string },
): Promise<Server> {
  return startServer(name, process.execPath, [...nodeArgs, script, ...args], opts);
}

/**
 * `serve`'s arguments: the fixture's keys, and this tree's bundle, its directory and one worker unless told;
 * log to stdout.
 */
export function serveArgs(
  f: Pick<Fixture, "jwksFile" | "directoryFile">,
  extra: string[] = [],
  o: { directory?: string; workers?: number; bundle?: string | undefined } = {},
): string[] {
  return [
    "serve",
    "--issuer",
    ISSUER,
    "--jwks",
    f.jwksFile,
    "--directory",
    o.directory ?? f.directoryFile,
    "--bundle",
    o.bundle ?? join(ROOT, "build", "bundle.tar.gz"),
    "--port",
    "{port}",
    "--workers",
    String(o.workers ?? 1),
    ...extra,
  ];
}

/** One side's settings for an A/B of two services (hot-path.ts, instructions.ts). */
export interface SideSettings {
  nodeFlags: string[];
  env: Record<string, string>;
  args: string[];
  bundle: string | undefined;
}

/**
 * The settings of side `name` ("before" or "after"), each a space-separated list in the environment:
 * BENCH_BEFORE_NODE_FLAGS / BENCH_AFTER_NODE_FLAGS (node options: a deployment's V8 flags), ..._ENV
 * ("NAME=value ..."), ..._ARGS (more `serve` options, e.g. --log-level warn), ..._BUNDLE (another bundle: a
 * policy change).
 */
export function sideSettings(name: "before" | "after"): SideSettings {
  const list = (setting: string) =>
    (process.env[`BENCH_${name.toUpperCase()}_${setting}`] ?? "").split(/\s+/).filter(Boolean);
  return {
    nodeFlags: list("NODE_FLAGS"),
    env: Object.fromEntries(
      list("ENV").map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]),
    ),
    args: list("ARGS"),
    bundle: list("BUNDLE")[0],
  };
}

/** SIGTERM, then SIGKILL after 5 s; resolves when the process has exited. */
export function stopServer(s: Server): Promise<void> {
  const p = s.child;
  return new Promise((resolve) => {
    if (p.exitCode !== null || p.signalCode !== null) return resolve();
    p.once("exit", () => resolve());
    p.kill("SIGTERM");
    setTimeout(() => p.kill("SIGKILL"), 5000).unref();
  });
}

/**
 * BENCH_SHAPE for the same-shaped server: Portier's own answers to the two requests (checked to allow), so the
 * reference server answers the same headers and JSON.
 */
export async function shapeOf(portierUrl: string, f: Fixture): Promise<string> {
  const path = PATH_TEMPLATE.replace("{id}", "42");
  const decideRes = await fetch(`${portierUrl}/decide`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ method: "GET", path, token: f.tokens[0] }),
  });
  const decideBody = (await decideRes.json()) as { allow?: boolean };
  if (decideBody.allow !== true) throw new Error(`Portier did not allow /decide: ${JSON.stringify(decideBody)}`);
  const gw = await fetch(`${portierUrl}/forward-auth/nginx`, {
    headers: { "x-original-method": "GET", "x-original-uri": path, authorization: `Bearer ${f.tokens[0]}` },
  });
  const gatewayBody = (await gw.json()) as { allow?: boolean };
  if (gw.status !== 200 || gatewayBody.allow !== true)
    throw new Error(`Portier's forward-auth did not allow: ${gw.status}`);
  const gatewayHeaders = Object.fromEntries(
    [...gw.headers].filter(([k]) => k.startsWith("x-portier-") || k === "cache-control"),
  );
  return JSON.stringify({ decideBody, gatewayHeaders, gatewayBody });
}

/**
 * The base commit's source tree in a temporary folder (node_modules linked), to import or compile; the caller
 * removes it when done, and a failure here removes it. (The archive is ~2 MB since docs/ holds flame graphs,
 * past execFileSync's 1 MiB default buffer: the bench failed with ENOBUFS.)
 */
export function baseTree(ref: string): string {
  const dir = mkdtempSync(join(tmpdir(), "portier-base-"));
  try {
    const paths = ["src", "docs", "data", "policies", "package.json", "tsconfig.json"];
    const tar = execFileSync("git", ["-C", ROOT, "archive", ref, ...paths], { maxBuffer: 256 * 1024 * 1024 });
    execFileSync("tar", ["-x", "-C", dir], { input: tar });
    symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
    return dir;
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** baseTree compiled with this tree's tsc (its dist/ beside its src/). */
export function compiledBase(ref: string): string {
  const dir = baseTree(ref);
  try {
    execFileSync(
      process.execPath,
      [join(ROOT, "node_modules", "typescript", "bin", "tsc"), "-p", join(dir, "tsconfig.json")],
      { stdio: "inherit" },
    );
    return dir;
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/**
 * A collector (of decision logs, or of OTLP spans) that reads every upload and answers 204, counting bytes and uploads.
 */
export async function startCollector(): Promise<{
  url: string;
  /** Its origin (http://127.0.0.1:port): an OTLP/HTTP endpoint, since it takes any POST. */
  origin: string;
  server: HttpServer;
  uploads: () => number;
  bytes: () => number;
}> {
  let uploads = 0;
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on("data", (c: Buffer) => (bytes += c.length));
    req.on("end", () => {
      uploads++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  const origin = `http://127.0.0.1:${port}`;
  return { url: `${origin}/logs`, origin, server, uploads: () => uploads, bytes: () => bytes };
}
