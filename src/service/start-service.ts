/**
 * Starts one service instance as a list of parts (parts/): the process log, the issuer's keys, the policy, the
 * directory, the shadow candidate, the decision log, tracing, the decision port, the admin port and the gRPC
 * port. Each is pushed on one PartStack with what closes it, and that stack releases a start that fails half-way
 * as it stops a running service: stop accepting, drain, parts, sinks, the log last.
 */
import type { Server } from "node:http";
import type { Socket } from "node:net";
import type { DestinationStream, Logger } from "pino";
import type { AccessTokenVerifier } from "../auth/index.js";
import type { Directory } from "../directory/index.js";
import type { ServiceConfig } from "./config.js";
import { createApp, readiness } from "./http/app.js";
import { createDecide, type Decide } from "./decide/decide.js";
import { createMetrics } from "./metrics.js";
import { shareWorkerRegistry } from "./cluster-metrics.js";
import type { PolicyHolder } from "./policy.js";
import { readTracingEnv } from "./tracing/tracing-env.js";
import type { DecisionTracer } from "./tracing/decision-tracer.js";
import { PartStack } from "./part-stack.js";
import { registerShadowMetrics } from "./shadow/metrics.js";
import { registerDecisionLogMetrics } from "./decision-logs/index.js";
import { processLog } from "./parts/process-log.js";
import { checkInputFiles } from "./parts/input-files.js";
import { issuerKeys } from "./parts/issuer-keys.js";
import { livePolicy, readVerificationKey } from "./parts/live-policy.js";
import { syncedUsers } from "./parts/synced-users.js";
import { scimProvider } from "./scim/start-scim.js";
import { registerScimMetrics } from "./scim/metrics.js";
import { shadowCandidate } from "./parts/shadow-candidate.js";
import { decisionLog } from "./parts/decision-log.js";
import { decisionTracing } from "./parts/decision-tracing.js";
import { decisionPort } from "./parts/decision-port.js";
import { adminPort } from "./parts/admin-port.js";
import { grpcPort } from "./parts/grpc-port.js";
import { authzenEndpoints } from "./parts/authzen-endpoints.js";

export { StartError, listenFailure } from "./start-error.js";

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

/**
 * `logger` replaces the service's logger entirely (tests); `logDestination` keeps it (level, redaction) and
 * writes its lines elsewhere (portier dev: readable lines). `handoff` (cluster workers): the primary owns the
 * decision port and hands each accepted connection over (acceptConnection). Tracing is read from the OTEL_*
 * environment (tracing/tracing-env.ts); `tracer` replaces it (tests: a tracer with an exporter of their own).
 */
export async function startService(config: ServiceConfig, options: StartOptions = {}): Promise<RunningService> {
  const stack = new PartStack();
  try {
    return await start(config, options, stack);
  } catch (err) {
    await stack.close({ deadline: Date.now(), started: false });
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

/** The start itself: each part is pushed on `stack`, which startService closes if a later part fails. */
async function start(config: ServiceConfig, options: StartOptions, stack: PartStack): Promise<RunningService> {
  // A bad OTEL_* variable is a start-up failure naming it, before anything is opened.
  const tracing = options.tracer ? undefined : readTracingEnv(process.env);
  const { logger, destination } = await stack.use(() => processLog(config, options));
  checkInputFiles(config);
  const verificationKey = readVerificationKey(config);
  // The verifier holds tokens to the live bundle's token shape (its project's subject claim and audience).
  // (The policy starts after the verifier: the shape is asked of it at each verification, when there is one.)
  const live: { policy?: PolicyHolder } = {};
  const verifier = await stack.use(() => issuerKeys(config, logger, () => live.policy?.current?.engine.tokenShape));
  const memoCounts = { hits: 0, misses: 0 };
  const policy = await stack.use(() => livePolicy(config, logger, verificationKey, memoCounts));
  live.policy = policy;
  const directory = await stack.use(() => syncedUsers(config, logger, policy));
  const scim = await stack.use(() => scimProvider(config, directory, logger));
  const shadow = (await stack.use(() => shadowCandidate(config, logger, verificationKey)))?.shadow;
  const decisionLogs = await stack.use(() => decisionLog(config, logger, policy));
  const tracer = await stack.use(() => decisionTracing(options.tracer, tracing, logger));

  const metrics = createMetrics({
    keys: () => verifier.status(),
    policy: () => policy.status(),
    directory: () => directory?.status(),
    log: () => destination,
    memo: () => memoCounts,
  });
  if (shadow) registerShadowMetrics(metrics.registry, () => shadow.status());
  if (scim) registerScimMetrics(metrics.registry, () => scim.status());
  registerDecisionLogMetrics(metrics.registry, decisionLogs.stats, config.decisionLogBufferBytes);
  shareWorkerRegistry(metrics.registry);
  const decide = createDecide({
    verifier,
    policy,
    shadow,
    directory,
    rolesClaim: config.rolesClaim,
    roleCheck: config.roleCheck,
    logger,
    metrics,
    tracer,
    decisionLog: decisionLogs,
  });

  // Set by the first step of a stop: /ready answers 503 and every answer closes its connection.
  let stopping = false;
  const authzen = authzenEndpoints(config, {
    policy,
    directory,
    verifier,
    logger,
    metrics,
    tracer,
    decisionLog: decisionLogs,
    shadow,
  });
  const deps = {
    verifier,
    policy,
    directory,
    metrics,
    shadow,
    stopping: () => stopping,
    decisionLogs,
    authzen: authzen?.router,
    scim,
  };
  const app = createApp(deps, config.adminPort === undefined ? "all" : "decisions");
  const http = await stack.use(() =>
    decisionPort(config, options, decide, app, logger, () => stopping, authzen?.answerPost),
  );
  const adminUrl = await stack.use(() => adminPort(config, options.listen !== false, () => createApp(deps, "admin")));
  const grpc = await stack.use(() => grpcPort(config, options, decide, () => readiness(deps).ready, logger));

  return {
    url: http.url,
    ...(adminUrl !== undefined ? { adminUrl } : {}),
    ...(grpc.address !== undefined ? { grpcAddress: grpc.address } : {}),
    server: http.server,
    decide,
    policy,
    verifier,
    directory,
    logger,
    beginStop() {
      stopping = true;
    },
    acceptConnection: http.accept,
    acceptGrpcConnection: grpc.accept,
    async close(timeoutMs = config.shutdownTimeout * 1000, delayMs = config.shutdownDelay * 1000) {
      const deadline = Date.now() + timeoutMs;
      // 1. /ready 503 and Connection: close on every answer, while still accepting and answering.
      stopping = true;
      // 2. --shutdown-delay: load balancers see /ready fail and stop sending here.
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(delayMs, timeoutMs)));
      // 3. The parts, in stages: the ports stop accepting, every accepted connection is answered, the parts
      // close, the sinks write what they hold (until the deadline), the log ends.
      await stack.close({ deadline, started: true });
    },
  };
}
