/**
 * `portier serve`: the decision service. With --workers N > 1 the primary forks N workers (node:cluster)
 * sharing the port; each worker is a full service. Config errors: one line per option, exit 2.
 */
import cluster from "node:cluster";
import { loadConfig, ConfigError, startService, StartError } from "../../service/index.js";

const USAGE = `usage: portier serve [--issuer URL] [--jwks FILE|URL] [--jwks-refresh-seconds N] [--bundle FILE] [--bundle-url URL]
  [--bundle-poll-seconds N] [--bundle-max-bytes N] [--directory FILE] [--directory-max-shrink 0..1] [--allow-directory-shrink true|false]
  [--roles-claim NAME] [--port N] [--host H] [--workers N] [--role-check enforce|audit]
  [--log-level LEVEL] [--max-body-bytes N] [--watch true|false] [--config FILE]
  [--headers-timeout-ms N] [--request-timeout-ms N] [--keep-alive-timeout-ms N] [--body-timeout-ms N]
  [--log-buffer-bytes N]   (env: PORTIER_<OPTION>)`;

export async function run(argv: string[]): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    console.log(USAGE);
    return 0;
  }
  let config;
  try {
    config = loadConfig(argv);
  } catch (err) {
    if (err instanceof ConfigError) {
      for (const p of err.problems) console.error(`portier serve: ${p}`);
      console.error(USAGE);
      return 2;
    }
    throw err;
  }

  if (config.workers > 1 && cluster.isPrimary) {
    return runPrimary(config.workers);
  }
  let service;
  try {
    service = await startService(config);
  } catch (err) {
    if (err instanceof StartError || (err as { code?: string }).code) {
      console.error(`portier serve: ${(err as Error).message}`);
      return 1;
    }
    throw err;
  }
  service.logger.info({ event: "listening", url: service.url, revision: service.policy.engine?.revision ?? null, worker: cluster.isWorker ? cluster.worker?.id : undefined }, "listening");
  service.logger.flush();
  if (cluster.isWorker) process.send?.({ portier: "listening", url: service.url });
  return new Promise<number>((resolve) => {
    const stop = () => {
      service.logger.info({ event: "stopping" }, "stopping");
      void service.close().then(() => resolve(0));
    };
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
  });
}

function runPrimary(workers: number): Promise<number> {
  return new Promise<number>((resolve) => {
    let stopping = false;
    let announced = false;
    const fork = () => {
      const w = cluster.fork();
      w.on("message", (m: { portier?: string; url?: string }) => {
        if (m?.portier === "listening" && !announced) {
          announced = true;
          // Workers share the primary's handle, so every worker reports the same URL.
          console.log(JSON.stringify({ level: 30, time: Date.now(), pid: process.pid, event: "listening", url: m.url, workers, msg: "listening" }));
        }
      });
    };
    for (let i = 0; i < workers; i++) fork();
    let failedEarly = 0;
    cluster.on("exit", (worker, code) => {
      if (stopping) {
        if (Object.keys(cluster.workers ?? {}).length === 0) resolve(0);
        return;
      }
      if (!announced) {
        // A worker that cannot start (bad bundle, bad directory) is not retried forever.
        if (++failedEarly >= workers) resolve(code || 1);
        return;
      }
      console.error(JSON.stringify({ level: 40, event: "worker_exit", worker: worker.id, code, msg: "worker exited; starting another" }));
      fork();
    });
    const stop = () => {
      stopping = true;
      for (const w of Object.values(cluster.workers ?? {})) w?.kill("SIGTERM");
      if (Object.keys(cluster.workers ?? {}).length === 0) resolve(0);
    };
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
  });
}
