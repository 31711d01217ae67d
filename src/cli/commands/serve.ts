/**
 * `portier serve`: the decision service. With --workers N > 1 the primary supervises N workers (node:cluster,
 * ../supervise-workers.ts) sharing the port; each worker is a full service. SIGTERM/SIGINT: stop accepting,
 * finish requests in flight (--shutdown-timeout), exit 0. Exit codes: 1 start-up failure (one line on stderr),
 * 2 configuration error (one line per problem).
 */
import cluster from "node:cluster";
import { loadConfig, ConfigError, startService, SERVICE_OPTIONS, type RunningService, type ServiceConfig } from "../../service/index.js";
import { parse, type CommandSpec } from "../args.js";
import { untilSignal } from "../shutdown.js";
import { superviseWorkers, type WorkerMessage } from "../supervise-workers.js";

export const SPEC = {
  name: "portier serve",
  summary: "Runs the decision service: POST /decide, /forward-auth, /envoy/..., /health, /ready, /metrics.",
  options: SERVICE_OPTIONS,
  notes: [
    "Every option can also be set as PORTIER_<OPTION> (PORTIER_PORT=8181, PORTIER_NO_DIRECTORY=true) or as a key of",
    "the --config file (camelCase: \"bundleUrl\"); flags win over the environment, which wins over the file.",
    "SIGTERM or SIGINT: stop accepting, let requests in flight finish (up to --shutdown-timeout), exit 0.",
    "exit codes: 0 stopped by a signal, 1 start-up failure or crash loop, 2 configuration error",
  ].join("\n"),
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
  if (cluster.isWorker) return runWorker(config);
  if (config.workers > 1) return superviseWorkers(config.workers, config.shutdownTimeout * 1000);
  return runSingle(config);
}

function announce(service: RunningService): void {
  service.logger.info({ event: "listening", url: service.url, ...(service.adminUrl ? { adminUrl: service.adminUrl } : {}), ...(service.grpcAddress ? { grpcAddress: service.grpcAddress } : {}), revision: service.policy.engine?.revision ?? null, worker: cluster.worker?.id }, "listening");
  service.logger.flush();
}

async function stop(service: RunningService, signal: string): Promise<void> {
  service.logger.info({ event: "stopping", signal }, "stopping");
  await service.close();
  service.logger.info({ event: "stopped" }, "stopped");
}

async function runSingle(config: ServiceConfig): Promise<number> {
  const stopped = untilSignal();
  let service;
  try {
    service = await startService(config);
  } catch (err) {
    console.error(`portier serve: ${(err as Error).message}`);
    return 1;
  }
  announce(service);
  await stop(service, await stopped);
  return 0;
}

function toPrimary(message: WorkerMessage): Promise<void> {
  return new Promise((resolve) => {
    if (!process.connected) return resolve();
    process.send!(message, undefined, {}, () => resolve());
  });
}

/** A cluster worker: reports start-up failures to the primary (which prints them once) instead of printing. */
async function runWorker(config: ServiceConfig): Promise<number> {
  // Listen for a stop from the very start, so one sent while this worker is still starting is not lost.
  const stopped = new Promise<string>((resolve) => {
    process.on("message", (m: WorkerMessage) => m?.portier === "shutdown" && resolve("shutdown"));
    process.once("disconnect", () => resolve("primary gone"));
    void untilSignal({ onSecond: "ignore" }).then(resolve);
  });
  let service;
  try {
    service = await startService(config);
  } catch (err) {
    await toPrimary({ portier: "start_failed", message: (err as Error).message });
    return 1;
  }
  announce(service);
  await toPrimary({ portier: "listening", url: service.url, ...(service.adminUrl ? { adminUrl: service.adminUrl } : {}), ...(service.grpcAddress ? { grpcAddress: service.grpcAddress } : {}) });
  await stop(service, await stopped);
  return 0;
}
