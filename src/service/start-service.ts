/**
 * Starts one service instance: logger, verifier, directory, policy (with reload), metrics, HTTP server.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync, readFileSync } from "node:fs";
import { PortierError } from "../errors/portier-error.js";
import { pino, type DestinationStream, type Logger } from "pino";
import { createAccessTokenVerifier, jwksSource, type AccessTokenVerifier } from "../auth/index.js";
import { Directory } from "../directory/index.js";
import { parseVerificationKey, type VerificationKey } from "../engine/index.js";
import type { ServiceConfig } from "./config.js";
import { createApp } from "./app.js";
import { decisionListener } from "./fast-adapters.js";
import { createDecide, type Decide } from "./decide.js";
import { createMetrics } from "./metrics.js";
import { shareWorkerRegistry } from "./cluster-metrics.js";
import { BoundedLogDestination } from "./bounded-log-destination.js";
import { PolicyHolder } from "./policy.js";

export interface RunningService {
  url: string;
  /** With --admin-port: where /health, /ready and /metrics answer. */
  adminUrl?: string;
  server: Server;
  decide: Decide;
  policy: PolicyHolder;
  verifier: AccessTokenVerifier;
  directory: Directory | undefined;
  logger: Logger;
  /** Stops accepting, lets requests in flight finish for up to graceMs (default --shutdown-timeout), then closes the rest. */
  close(graceMs?: number): Promise<void>;
}

/** A start-up failure: one line naming what is wrong and what to do. */
export class StartError extends PortierError {
  static override readonly code = "start_failed";
}

function listenFailure(err: NodeJS.ErrnoException, host: string, port: number): StartError {
  const where = `${host}:${port}`;
  if (err.code === "EADDRINUSE") return new StartError(`cannot listen on ${where}: the address is in use by another process; stop it or choose another --port`);
  if (err.code === "EACCES") return new StartError(`cannot listen on ${where}: permission denied; choose a --port above 1023`);
  if (err.code === "EADDRNOTAVAIL") return new StartError(`cannot listen on ${where}: no such local address; check --host`);
  return new StartError(`cannot listen on ${where}: ${err.message}`);
}

/** --verification-key, read once at start (a bad one is a start-up failure). */
function readVerificationKey(config: ServiceConfig): VerificationKey | undefined {
  if (config.verificationKey === undefined) return undefined;
  try {
    return parseVerificationKey(readFileSync(config.verificationKey, "utf8"), config.verificationKey, config.verificationAlg);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new StartError(`config.verificationKey: ${code ? `${config.verificationKey}: cannot read (${code})` : (err as Error).message}`);
  }
}

/**
 * `logger` replaces the service's logger entirely (tests); `logDestination` keeps it (level, redaction) and
 * writes its lines elsewhere (portier dev: readable lines).
 */
export async function startService(config: ServiceConfig, options: { logger?: Logger; logDestination?: DestinationStream; listen?: boolean } = {}): Promise<RunningService> {
  // Decision lines are buffered (one write per 4 KiB instead of one per decision), flushed at least every
  // 200 ms and on exit, and capped: with stdout not drained, lines past the cap are dropped and counted.
  // Opening process.stdout first makes fd 1 non-blocking when it is a pipe or socket (see the destination).
  void process.stdout;
  const destination = new BoundedLogDestination({ fd: 1, maxBufferBytes: config.logBufferBytes });
  process.once("exit", () => destination.flushSync());
  const logger =
    options.logger ??
    pino({ level: config.logLevel, base: { pid: process.pid }, redact: { paths: ["token", "authorization", "headers.authorization", "req.headers.authorization"], remove: true } }, options.logDestination ?? destination);
  const jwks = config.jwks;
  const jwksOption = jwksSource(jwks);
  if (jwksOption.jwksFile !== undefined && !existsSync(jwksOption.jwksFile)) throw new StartError(`config.jwks: file not found: ${jwks} (pass the issuer's JWKS file or URL, or omit --jwks to use discovery)`);
  if (config.directory !== undefined && !existsSync(config.directory)) throw new StartError(`config.directory: file not found: ${config.directory} (pass the synced-users file)`);
  if (config.bundleUrl === undefined && !existsSync(config.bundle)) {
    throw new StartError(`config.bundle: file not found: ${config.bundle} (run make build, or pass --bundle FILE or --bundle-url URL)`);
  }
  const verificationKey = readVerificationKey(config);
  const verifier = createAccessTokenVerifier({ issuer: config.issuer, ...jwksOption, refreshIntervalMs: config.jwksRefreshSeconds * 1000, watchJwksFile: config.watch, logger });
  // Key loading runs in the background: readiness reports it; decisions deny keys_unavailable meanwhile.
  // A JWKS file is read before the service listens (a broken one is a start-up failure); keys from the network
  // too with --require-keys-at-start.
  if (config.requireKeysAtStart || "jwksFile" in jwksOption) {
    try {
      await verifier.ready();
    } catch {
      verifier.close();
      const st = verifier.status();
      throw new StartError(
        "jwksFile" in jwksOption
          ? `config.jwks: ${jwks}: ${st.lastError ?? "unknown error"} (pass a JWKS file: {"keys": [...]})`
          : `issuer keys: cannot load them from ${st.source}: ${st.lastError ?? "unknown error"} (--require-keys-at-start is set; check --issuer and --jwks)`,
      );
    }
  } else {
    verifier.ready().catch((err: Error) => logger.warn({ event: "keys_unavailable", error: err.message }, "issuer keys not loaded yet"));
  }

  // One tally of memo hits and misses for every engine this process loads (a metric that outlives reloads).
  const memoCounts = { hits: 0, misses: 0 };
  const policy = new PolicyHolder(logger, config.bundleUrl ? { url: config.bundleUrl, pollSeconds: config.bundlePollSeconds } : { file: config.bundle, watch: config.watch }, config.bundleMaxBytes, verificationKey, { entries: config.decisionMemoEntries, counts: memoCounts });
  // A bundle server that is down at start leaves the service not ready (and polling); a bad file stops it.
  if (!(await policy.start()) && !config.bundleUrl) {
    verifier.close();
    await policy.close();
    throw new StartError(`config.bundle: ${policy.status().lastError}`);
  }

  // Role names come from the loaded bundle's catalog (none until one is loaded); a new bundle re-resolves
  // the directory before it goes live, so names and policy activate together. With no bundle yet (its
  // server is down), the directory waits for the first one's names (not ready until then).
  let directory: Directory | undefined;
  if (config.directory) {
    const names = policy.resolveRole;
    const options = { watch: config.watch, logger, maxShrink: config.directoryMaxShrink, allowShrink: config.allowDirectoryShrink };
    try {
      directory = policy.engine ? await Directory.open(config.directory, names, options) : Directory.pending(config.directory, names, options);
    } catch (err) {
      verifier.close();
      await policy.close();
      throw new StartError(`config.directory: ${(err as Error).message}`);
    }
    const dir = directory;
    policy.prepareRoles = (resolve) => dir.prepareRoles(resolve);
    if (policy.resolveRole !== names) void dir.prepareRoles(policy.resolveRole).then((commit) => commit()); // a bundle landed while it opened
  }

  const metrics = createMetrics({ keys: () => verifier.status(), policy: () => policy.status(), directory: () => directory?.status(), log: () => destination, memo: () => memoCounts });
  const decide = createDecide({ verifier, policy, directory, rolesClaim: config.rolesClaim, roleCheck: config.roleCheck, logger, metrics });
  shareWorkerRegistry(metrics.registry);
  const deps = { verifier, policy, directory, metrics };
  const app = createApp(deps, config.adminPort === undefined ? "all" : "decisions");
  // --admin-port: health, readiness and metrics apart from the decision port (shared by workers like it).
  const admin = config.adminPort === undefined ? undefined : createServer({ headersTimeout: config.headersTimeoutMs, requestTimeout: config.requestTimeoutMs }, createApp(deps, "admin"));
  const server = createServer(
    // Header and request timeouts are enforced by a sweep every connectionsCheckingInterval.
    { headersTimeout: config.headersTimeoutMs, requestTimeout: config.requestTimeoutMs, connectionsCheckingInterval: Math.min(1000, config.headersTimeoutMs) },
    decisionListener(decide, { maxBytes: config.maxBodyBytes, timeoutMs: config.bodyTimeoutMs }, app, logger),
  );
  // While stopping, every answer closes its connection, so keep-alive clients cannot hold the server open.
  let stopping = false;
  server.prependListener("request", (_req, res) => {
    if (stopping) res.shouldKeepAlive = false;
  });
  server.keepAliveTimeout = config.keepAliveTimeoutMs;
  let url = "";
  let adminUrl: string | undefined;
  if (options.listen !== false) {
    const bind = async (s: Server, port: number, host: string): Promise<string> => {
      try {
        await new Promise<void>((resolve, reject) => {
          s.once("error", reject);
          s.listen(port, host, () => {
            s.off("error", reject);
            resolve();
          });
        });
      } catch (err) {
        if (s !== server) server.close();
        verifier.close();
        directory?.close();
        await policy.close();
        throw listenFailure(err as NodeJS.ErrnoException, host, port);
      }
      const addr = s.address() as AddressInfo;
      return `http://${addr.address.includes(":") ? `[${addr.address}]` : addr.address}:${addr.port}`;
    };
    url = await bind(server, config.port, config.host);
    if (admin && config.adminPort !== undefined) adminUrl = await bind(admin, config.adminPort, config.adminHost);
  }
  return {
    url,
    ...(adminUrl !== undefined ? { adminUrl } : {}),
    server,
    decide,
    policy,
    verifier,
    directory,
    logger,
    async close(graceMs = (config.shutdownTimeout ?? 10) * 1000) {
      stopping = true;
      await new Promise<void>((resolve) => {
        // Connections idle between requests close now and whenever one becomes idle; after graceMs every
        // connection still open is closed, answered or not.
        const idle = setInterval(() => server.closeIdleConnections(), 25);
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        server.close(() => {
          clearInterval(idle);
          clearTimeout(force);
          resolve();
        });
        server.closeIdleConnections();
      });
      if (admin?.listening) {
        await new Promise<void>((resolve) => {
          admin.close(() => resolve());
          admin.closeAllConnections();
        });
      }
      verifier.close();
      directory?.close();
      await policy.close();
      await destination.end(1000);
    },
  };
}
