/**
 * `portier serve`: the decision service. With --workers N > 1 the primary supervises N workers (node:cluster,
 * ../supervise-workers.ts) and hands them the connections it accepts on the decision and gRPC ports; each
 * worker is a full service.
 * SIGTERM/SIGINT: /ready 503, keep serving for --shutdown-delay, stop accepting, answer every accepted
 * connection (all within --shutdown-timeout), exit 0. Exit 2 (../exit-codes.ts): a configuration error (one
 * line per problem), a start-up failure or a crash loop (one line on stderr). --check-config: the same checks
 * and lines, no port bound, exit 0.
 */
import cluster from "node:cluster";
import type { Socket } from "node:net";
import {
  loadConfig,
  checkConfig,
  ConfigError,
  startService,
  decisionLogSinks,
  SERVICE_OPTIONS,
  type RunningService,
  type ServiceConfig,
} from "../../service/index.js";
import { EXIT } from "../exit-codes.js";
import { parse, type CommandSpec } from "../args.js";
import { untilSignal } from "../shutdown.js";
import { superviseWorkers, type WorkerMessage } from "../supervise-workers.js";
import { messageOf } from "../../errors/caught.js";

export const SPEC = {
  name: "portier serve",
  summary: "Runs the decision service: POST /decide, /forward-auth, /envoy/..., /health, /ready, /metrics.",
  options: SERVICE_OPTIONS,
  notes: [
    "Every option can also be set as PORTIER_<OPTION> (PORTIER_PORT=8181, PORTIER_NO_DIRECTORY=true) or as a key of",
    'the --config file (camelCase: "bundleUrl"); flags win over the environment, which wins over the file.',
    "SIGTERM or SIGINT: /ready answers 503, the service keeps answering for --shutdown-delay, then stops accepting,",
    "answers every connection it accepted and exits 0; the whole stop takes at most --shutdown-timeout.",
  ].join("\n"),
  exits: { ok: "stopped by a signal (a start-up failure or a crash loop exits 2)" },
} as const satisfies CommandSpec;

export async function run(argv: string[]): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) parse(argv, SPEC);
  let config;
  try {
    config = loadConfig(argv);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    for (const p of err.problems) console.error(`portier serve: ${p}`);
    console.error("(portier serve --help lists the options)");
    return 2;
  }
  if (config.checkConfig) return runCheck(config);
  if (cluster.isWorker) return runWorker(config);
  if (config.workers > 1) {
    return superviseWorkers({
      workers: config.workers,
      host: config.host,
      port: config.port,
      grpc: config.grpcPort === undefined ? undefined : { host: config.grpcHost ?? config.host, port: config.grpcPort },
      shutdownTimeoutMs: config.shutdownTimeout * 1000,
      shutdownDelayMs: config.shutdownDelay * 1000,
    });
  }
  return runSingle(config);
}

/** --check-config: what start-up would load, loaded and released; one line either way. */
async function runCheck(config: ServiceConfig): Promise<number> {
  try {
    console.log(`portier serve: ${await checkConfig(config)}`);
    return EXIT.ok;
  } catch (err) {
    console.error(`portier serve: ${messageOf(err)}`);
    return EXIT.error;
  }
}

function announce(service: RunningService, config: ServiceConfig): void {
  const revision = service.policy.engine?.revision ?? null;
  const decisionLogs = decisionLogSinks(config);
  // A worker has no port of its own (the primary says "listening" with the URL once one is ready).
  if (cluster.isWorker)
    service.logger.info(
      {
        event: "worker_ready",
        ...(service.adminUrl ? { adminUrl: service.adminUrl } : {}),
        ...(service.grpcAddress ? { grpcAddress: service.grpcAddress } : {}),
        revision,
        decisionLogs,
        worker: cluster.worker?.id,
      },
      "worker ready",
    );
  else
    service.logger.info(
      {
        event: "listening",
        url: service.url,
        ...(service.adminUrl ? { adminUrl: service.adminUrl } : {}),
        ...(service.grpcAddress ? { grpcAddress: service.grpcAddress } : {}),
        revision,
        decisionLogs,
      },
      "listening",
    );
  service.logger.flush();
}

async function stop(service: RunningService, signal: string, timeoutMs?: number, delayMs?: number): Promise<void> {
  service.logger.info({ event: "stopping", signal }, "stopping");
  await service.close(timeoutMs, delayMs);
  service.logger.info({ event: "stopped" }, "stopped");
}

/**
 * The service started, or how its start ended: failed, or a stop that came first. A stop during start-up ends the
 * process at once (what the start waits on, a slow key server for one, does not hold an operator's stop).
 */
async function started<S>(
  start: Promise<RunningService>,
  stop: Promise<S>,
): Promise<{ service: RunningService } | { failed: unknown } | { stopped: S }> {
  return Promise.race([
    start.then(
      (service) => ({ service }),
      (failed: unknown) => ({ failed }),
    ),
    stop.then((stopped) => ({ stopped })),
  ]);
}

async function runSingle(config: ServiceConfig): Promise<number> {
  const signal = untilSignal();
  const start = await started(startService(config), signal);
  if ("stopped" in start) {
    console.error(`portier serve: stopped by ${start.stopped} while starting`);
    return EXIT.ok;
  }
  if ("failed" in start) {
    console.error(`portier serve: ${messageOf(start.failed)}`);
    return EXIT.error;
  }
  announce(start.service, config);
  await stop(start.service, await signal);
  return 0;
}

function toPrimary(message: WorkerMessage): Promise<void> {
  return new Promise((resolve) => {
    if (!process.connected) return resolve();
    process.send!(message, undefined, {}, () => resolve());
  });
}

/**
 * A cluster worker: serves the connections the primary hands over and stops when the primary says so (a
 * signal sent to the whole process group is the primary's to act on); reports start-up failures to the
 * primary (which prints them once) instead of printing.
 */
async function runWorker(config: ServiceConfig): Promise<number> {
  // The service once started: a connection or a stop may come before.
  const live: { service?: RunningService } = {};
  let stopping = false;
  // Listen for a stop from the very start, so one sent while this worker is still starting is not lost.
  const stopped = new Promise<{ reason: string; graceMs: number }>((resolve) => {
    process.on("message", (m: WorkerMessage, handle: unknown) => {
      if (m?.portier === "connection" && live.service) {
        if (m.port === "grpc") live.service.acceptGrpcConnection(handle as Socket);
        else live.service.acceptConnection(handle as Socket);
        void toPrimary({ portier: "connection_taken", id: m.id });
      } else if (m?.portier === "stopping") {
        stopping = true;
        live.service?.beginStop();
      } else if (m?.portier === "shutdown") resolve({ reason: "shutdown", graceMs: m.graceMs });
    });
    process.once("disconnect", () => resolve({ reason: "primary gone", graceMs: config.shutdownTimeout * 1000 }));
  });
  // Keep the default action (exit) away from SIGTERM/SIGINT: the primary drives the stop.
  void untilSignal({ onSecond: "ignore" });
  const start = await started(startService(config, { handoff: true }), stopped);
  if ("stopped" in start) return EXIT.ok;
  if ("failed" in start) {
    await toPrimary({ portier: "start_failed", message: messageOf(start.failed) });
    return EXIT.error;
  }
  const service = (live.service = start.service);
  if (stopping) service.beginStop();
  announce(service, config);
  await toPrimary({
    portier: "listening",
    ...(service.adminUrl ? { adminUrl: service.adminUrl } : {}),
    ...(service.grpcAddress ? { grpcAddress: service.grpcAddress } : {}),
  });
  const { reason, graceMs } = await stopped;
  await stop(service, reason, graceMs, 0);
  return 0;
}
