/**
 * Starts one service instance: logger, verifier, directory, policy (with reload), metrics, HTTP server.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { codeOf, messageOf } from "../errors/caught.js";
import { PortierError } from "../errors/portier-error.js";
import { InputFileError, readInputFileSync } from "../files/read-input-file.js";
import { pino, type DestinationStream, type Logger } from "pino";
import { createAccessTokenVerifier, jwksSource, type AccessTokenVerifier } from "../auth/index.js";
import { Directory } from "../directory/index.js";
import { parseVerificationKey, type VerificationKey } from "../engine/index.js";
import type { ServiceConfig } from "./config.js";
import { createApp, readiness } from "./http/app.js";
import { decisionListener } from "./http/listener.js";
import { createDecide, type Decide } from "./decide/decide.js";
import { createMetrics } from "./metrics.js";
import { shareWorkerRegistry } from "./cluster-metrics.js";
import { BoundedLogDestination } from "./bounded-log-destination.js";
import { PolicyHolder, type PolicySnapshot } from "./policy.js";
import { ConnectionDrain, stopAccepting } from "./connection-drain.js";
import { grpcForHandoff, startGrpc, type GrpcHandoff, type GrpcService } from "./grpc/server.js";
import { readTracingEnv } from "./tracing/tracing-env.js";
import { startDecisionTracer, type DecisionTracer } from "./tracing/decision-tracer.js";
import { Releases } from "./releases.js";
import { startShadow } from "./shadow/start-shadow.js";
import { registerShadowMetrics } from "./shadow/metrics.js";
import { createDecisionLogs, registerDecisionLogMetrics, type DecisionLogs } from "./decision-logs/index.js";

export interface RunningService {
  url: string;
  /** With --admin-port: where /health, /ready and /metrics answer. */
  adminUrl?: string;
  /** With --grpc-port: host:port of the gRPC ext_authz and health services. */
  grpcAddress?: string;
  server: Server;
  decide: Decide;
  policy: PolicyHolder;
  verifier: AccessTokenVerifier;
  directory: Directory | undefined;
  logger: Logger;
  /** First step of a stop: /ready answers 503 ("stopping") and every answer closes its connection; still accepting. */
  beginStop(): void;
  /**
   * The whole stop, within timeoutMs (default --shutdown-timeout): beginStop, delayMs (default --shutdown-delay)
   * still accepting, then stop accepting and answer every accepted connection, cutting what is left at the end.
   */
  close(timeoutMs?: number, delayMs?: number): Promise<void>;
  /** With `handoff`: a connection accepted by the cluster primary, to be served here. */
  acceptConnection(socket: Socket): void;
  /** With `handoff` and --grpc-port: a gRPC connection accepted by the cluster primary, to be served here. */
  acceptGrpcConnection(socket: Socket): void;
}

/** A start-up failure: one line naming what is wrong and what to do. */
export class StartError extends PortierError {
  static override readonly code = "start_failed";
}

export function listenFailure(err: NodeJS.ErrnoException, host: string, port: number): StartError {
  const where = `${host}:${port}`;
  if (err.code === "EADDRINUSE")
    return new StartError(
      `cannot listen on ${where}: the address is in use by another process; stop it or choose another --port`,
    );
  if (err.code === "EACCES")
    return new StartError(`cannot listen on ${where}: permission denied; choose a --port above 1023`);
  if (err.code === "EADDRNOTAVAIL")
    return new StartError(`cannot listen on ${where}: no such local address; check --host`);
  return new StartError(`cannot listen on ${where}: ${err.message}`);
}

/** --grpc-port: the gRPC service beside the HTTP one (same decide); a bind failure names the option. */
async function bindGrpc(
  config: ServiceConfig,
  decide: Decide,
  ready: () => boolean,
  logger: Logger,
): Promise<GrpcService> {
  const host = config.grpcHost ?? config.host;
  try {
    return await startGrpc(
      decide,
      ready,
      { host, port: config.grpcPort ?? 0, maxMessageBytes: config.grpcMaxMessageBytes },
      logger,
    );
  } catch (err) {
    throw new StartError(
      `cannot listen on ${host}:${config.grpcPort} for gRPC: ${messageOf(err).split("\n")[0]}; stop the other ` +
        `process or choose another --grpc-port (or check --grpc-host)`,
    );
  }
}

/** The largest --verification-key file: a PEM public key is a few KiB. */
const MAX_KEY_FILE_BYTES = 64 * 1024;

/** --verification-key, read once at start (a bad one is a start-up failure). */
function readVerificationKey(config: ServiceConfig): VerificationKey | undefined {
  if (config.verificationKey === undefined) return undefined;
  try {
    return parseVerificationKey(
      readInputFileSync(config.verificationKey, MAX_KEY_FILE_BYTES).toString("utf8"),
      config.verificationKey,
      config.verificationAlg,
    );
  } catch (err) {
    if (err instanceof InputFileError) throw new StartError(`config.verificationKey: ${err.message}`);
    const code = codeOf(err);
    throw new StartError(
      `config.verificationKey: ${code ? `${config.verificationKey}: cannot read (${code})` : messageOf(err)}`,
    );
  }
}

/**
 * `logger` replaces the service's logger entirely (tests); `logDestination` keeps it (level, redaction) and
 * writes its lines elsewhere (portier dev: readable lines). `handoff` (cluster workers): the primary owns the
 * decision port and hands each accepted connection over (acceptConnection); the decision server then listens
 * only on a private Unix socket, because node:http enforces its headers and request timeouts only on the
 * connections of a listening server. Tracing is read from the OTEL_* environment (tracing/tracing-env.ts);
 * `tracer` replaces it (tests: a tracer with an exporter of their own).
 */
export async function startService(config: ServiceConfig, options: StartOptions = {}): Promise<RunningService> {
  const releases = new Releases();
  try {
    return await start(config, options, releases);
  } catch (err) {
    await releases.release();
    throw err;
  }
}

interface StartOptions {
  logger?: Logger;
  logDestination?: DestinationStream;
  listen?: boolean;
  handoff?: boolean;
  tracer?: DecisionTracer;
}

/** The start itself: each part it acquires is added to `releases`, which startService runs if a later part fails. */
async function start(config: ServiceConfig, options: StartOptions, releases: Releases): Promise<RunningService> {
  // A bad OTEL_* variable is a start-up failure naming it, before anything is opened.
  const tracing = options.tracer ? undefined : readTracingEnv(process.env);
  // Decision lines are buffered (one write per 4 KiB instead of one per decision), flushed at least every
  // 200 ms and on exit, and capped: with stdout not drained, lines past the cap are dropped and counted.
  // Opening process.stdout first makes fd 1 non-blocking when it is a pipe or socket (see the destination).
  void process.stdout;
  const destination = new BoundedLogDestination({ fd: 1, maxBufferBytes: config.logBufferBytes });
  const flushOnExit = (): void => destination.flushSync();
  process.once("exit", flushOnExit);
  // A failed start keeps what was logged (flushed now), not the exit hook of a service that never ran.
  releases.add(() => {
    flushOnExit();
    process.off("exit", flushOnExit);
  });
  const logger =
    options.logger ??
    pino(
      {
        level: config.logLevel,
        base: { pid: process.pid },
        redact: {
          paths: ["token", "authorization", "headers.authorization", "req.headers.authorization"],
          remove: true,
        },
      },
      options.logDestination ?? destination,
    );
  const jwks = config.jwks;
  const jwksOption = jwksSource(jwks);
  if (jwksOption.jwksFile !== undefined && !existsSync(jwksOption.jwksFile))
    throw new StartError(
      `config.jwks: file not found: ${jwks} (pass the issuer's JWKS file or URL, or omit --jwks to use discovery)`,
    );
  if (config.directory !== undefined && !existsSync(config.directory))
    throw new StartError(`config.directory: file not found: ${config.directory} (pass the synced-users file)`);
  if (config.bundleUrl === undefined && !existsSync(config.bundle)) {
    throw new StartError(
      `config.bundle: file not found: ${config.bundle} (run make build, or pass --bundle FILE or --bundle-url URL)`,
    );
  }
  if (config.shadowBundle !== undefined && !existsSync(config.shadowBundle))
    throw new StartError(
      `config.shadowBundle: file not found: ${config.shadowBundle} ` +
        "(pass the candidate bundle, or drop --shadow-bundle)",
    );
  const verificationKey = readVerificationKey(config);
  const verifier = createAccessTokenVerifier({
    issuer: config.issuer,
    ...jwksOption,
    refreshIntervalMs: config.jwksRefreshSeconds * 1000,
    watchJwksFile: config.watch,
    logger,
  });
  releases.add(() => verifier.close());
  // Key loading runs in the background: readiness reports it; decisions deny keys_unavailable meanwhile.
  // A JWKS file is read before the service listens (a broken one is a start-up failure); keys from the network
  // too with --require-keys-at-start.
  if (config.requireKeysAtStart || "jwksFile" in jwksOption) {
    try {
      await verifier.ready();
    } catch {
      const st = verifier.status();
      throw new StartError(
        "jwksFile" in jwksOption
          ? `config.jwks: ${jwks}: ${st.lastError ?? "unknown error"} (pass a JWKS file: {"keys": [...]})`
          : `issuer keys: cannot load them from ${st.source}: ${st.lastError ?? "unknown error"} ` +
              `(--require-keys-at-start is set; check --issuer and --jwks)`,
      );
    }
  } else {
    verifier
      .ready()
      .catch((err: Error) =>
        logger.warn({ event: "keys_unavailable", error: err.message }, "issuer keys not loaded yet"),
      );
  }

  // One tally of memo hits and misses for every engine this process loads (a metric that outlives reloads).
  const memoCounts = { hits: 0, misses: 0 };
  const policy = new PolicyHolder(
    logger,
    config.bundleUrl
      ? { url: config.bundleUrl, pollSeconds: config.bundlePollSeconds }
      : { file: config.bundle, watch: config.watch },
    config.bundleMaxBytes,
    verificationKey,
    { entries: config.decisionMemoEntries, counts: memoCounts },
  );
  releases.add(() => policy.close());
  // A bundle server that is down at start leaves the service not ready (and polling); a bad file stops it.
  if (!(await policy.start()) && !config.bundleUrl) {
    throw new StartError(`config.bundle: ${policy.status().lastError}`);
  }

  // The directory keeps role names as written; each decision resolves them with the names of the bundle that
  // evaluates it (policy.current), so the directory loads without a bundle and a bundle swap re-reads nothing.
  // The directory's guards count the records the live bundle's names resolve. When a bundle goes live, the
  // records its names cannot resolve are counted again and reported (not refused: a policy change is
  // authoritative, and fewer roles is the fail-closed direction).
  let directory: Directory | undefined;
  if (config.directory || config.directoryUrl) {
    const live = policy.current;
    const options = {
      watch: config.watch,
      logger,
      // The guards count the records these names resolve: what a decision will see.
      roles: live && { resolve: live.rolesOf, bundle: live.engine.revision },
      maxShrink: config.directoryMaxShrink,
      allowShrink: config.allowDirectoryShrink,
      shrinkWindowMs: config.directoryShrinkWindowSeconds * 1000,
    };
    // A directory server that is down at start leaves the service not ready (and polling), as a bundle server does.
    const url = config.directoryUrl && {
      url: config.directoryUrl,
      pollSeconds: config.directoryPollSeconds,
      maxBytes: config.directoryMaxBytes,
    };
    try {
      directory = url ? await Directory.poll(url, options) : await Directory.open(config.directory!, options);
    } catch (err) {
      throw new StartError(`config.directory: ${messageOf(err)}`);
    }
    const dir = directory;
    releases.add(() => dir.close());
    const check = (p: PolicySnapshot) => dir.checkRoles(p.rolesOf, p.engine.revision);
    policy.onActivate = check;
    if (policy.current) check(policy.current);
  }

  // A candidate that cannot be loaded is a problem on /ready, never a start-up failure.
  const shadow = await startShadow(config, logger, verificationKey);
  if (shadow) releases.add(() => shadow.close());
  // The decision log: the stdout line and, with --decision-log-url, the collector (a bad token file stops here).
  let decisionLogs: DecisionLogs;
  try {
    decisionLogs = createDecisionLogs(config, logger, () => policy.engine?.logRules);
  } catch (err) {
    throw new StartError(`config.decisionLogTokenFile: ${messageOf(err)}`);
  }
  const logs = decisionLogs;
  releases.add(() => logs.close(Date.now()));
  const metrics = createMetrics({
    keys: () => verifier.status(),
    policy: () => policy.status(),
    directory: () => directory?.status(),
    log: () => destination,
    memo: () => memoCounts,
  });
  if (shadow) registerShadowMetrics(metrics.registry, () => shadow.shadow.status());
  // Off (nothing of the OpenTelemetry SDK loaded) unless an OTLP endpoint is set.
  const tracer = options.tracer ?? (tracing ? await startDecisionTracer(tracing, logger) : undefined);
  if (tracer) releases.add(() => tracer.shutdown(1000));
  const decide = createDecide({
    verifier,
    policy,
    shadow: shadow?.shadow,
    directory,
    rolesClaim: config.rolesClaim,
    roleCheck: config.roleCheck,
    logger,
    metrics,
    tracer,
    decisionLog: decisionLogs,
  });
  registerDecisionLogMetrics(metrics.registry, decisionLogs.stats, config.decisionLogBufferBytes);
  shareWorkerRegistry(metrics.registry);
  // Set by the first step of a stop: /ready answers 503 and every answer closes its connection.
  let stopping = false;
  const deps = { verifier, policy, directory, metrics, shadow: shadow?.shadow, stopping: () => stopping, decisionLogs };
  const app = createApp(deps, config.adminPort === undefined ? "all" : "decisions");
  // --admin-port: health, readiness and metrics apart from the decision port (shared by workers like it).
  const admin =
    config.adminPort === undefined
      ? undefined
      : createServer(
          { headersTimeout: config.headersTimeoutMs, requestTimeout: config.requestTimeoutMs },
          createApp(deps, "admin"),
        );
  const server = createServer(
    // Header and request timeouts are enforced by a sweep every connectionsCheckingInterval.
    {
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      connectionsCheckingInterval: Math.min(1000, config.headersTimeoutMs),
    },
    decisionListener(decide, { maxBytes: config.maxBodyBytes, timeoutMs: config.bodyTimeoutMs }, app, logger),
  );
  // While stopping, every answer closes its connection, so keep-alive clients cannot hold the server open.
  server.prependListener("request", (_req, res) => {
    if (stopping) res.shouldKeepAlive = false;
  });
  server.keepAliveTimeout = config.keepAliveTimeoutMs;
  const connections = new ConnectionDrain(server);
  let privateDir: string | undefined;
  let url = "";
  let adminUrl: string | undefined;
  let grpc: GrpcService | GrpcHandoff | undefined;
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
        throw listenFailure(err as NodeJS.ErrnoException, host, port);
      }
      const addr = s.address() as AddressInfo;
      return `http://${addr.address.includes(":") ? `[${addr.address}]` : addr.address}:${addr.port}`;
    };
    releases.add(() => server.close());
    if (admin) releases.add(() => admin.close());
    if (options.handoff) {
      // A directory only this user can enter: nothing else connects to this socket.
      const dir = mkdtempSync(join(tmpdir(), "portier-worker-"));
      privateDir = dir;
      releases.add(() => rmSync(dir, { recursive: true, force: true }));
      const path = join(dir, "http.sock");
      await new Promise<void>((resolve) => server.listen({ path, exclusive: true }, resolve));
    } else url = await bind(server, config.port, config.host);
    if (admin && config.adminPort !== undefined) adminUrl = await bind(admin, config.adminPort, config.adminHost);
    // With handoff, the primary owns the gRPC port too and hands its connections over (acceptGrpcConnection).
    const ready = () => readiness(deps).ready;
    if (config.grpcPort !== undefined)
      grpc = options.handoff
        ? grpcForHandoff(decide, ready, config.grpcMaxMessageBytes, logger)
        : await bindGrpc(config, decide, ready, logger);
  }
  return {
    url,
    ...(adminUrl !== undefined ? { adminUrl } : {}),
    ...(grpc && "address" in grpc ? { grpcAddress: grpc.address } : {}),
    server,
    decide,
    policy,
    verifier,
    directory,
    logger,
    beginStop() {
      stopping = true;
    },
    acceptConnection(socket) {
      server.emit("connection", socket);
    },
    acceptGrpcConnection(socket) {
      if (grpc && "accept" in grpc) grpc.accept(socket);
      else socket.destroy();
    },
    async close(timeoutMs = config.shutdownTimeout * 1000, delayMs = config.shutdownDelay * 1000) {
      const deadline = Date.now() + timeoutMs;
      // 1. /ready 503 and Connection: close on every answer, while still accepting and answering.
      stopping = true;
      // 2. --shutdown-delay: load balancers see /ready fail and stop sending here.
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(delayMs, timeoutMs)));
      // 3. Accept what already connected, then close the port (and the gRPC port: calls in flight finish).
      const grpcClosed = grpc?.close(Math.max(0, deadline - Date.now()));
      await stopAccepting(server);
      // 4. Answer every accepted connection; idle keep-alive ones close; what is left is cut at the deadline.
      await connections.drain(deadline);
      if (privateDir) rmSync(privateDir, { recursive: true, force: true });
      // 5. The admin port (its probes answered /ready 503 meanwhile), then keys, directory, policy, spans, log.
      if (admin?.listening) {
        await new Promise<void>((resolve) => {
          admin.close(() => resolve());
          admin.closeAllConnections();
        });
      }
      await grpcClosed;
      verifier.close();
      directory?.close();
      // Decisions still waiting for the shadow candidate are evaluated and their lines written before the log ends.
      await shadow?.close();
      await policy.close();
      // 6. The decision log (what was recorded is written and shipped, retried until the deadline) and the spans
      // still queued (exported within what is left of the stop, at least a second), side by side.
      await Promise.all([decisionLogs.close(deadline), tracer?.shutdown(Math.max(1000, deadline - Date.now()))]);
      await destination.end(1000);
      process.off("exit", flushOnExit);
    },
  };
}
