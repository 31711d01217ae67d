/**
 * The node:cluster primary of `portier serve --workers N`: forks N workers sharing the port and keeps them
 * running. A start-up failure of the first workers is printed once (one line on stderr) and ends the service
 * with exit 1; a worker that dies later is replaced after an exponential back-off, and CRASH_LIMIT deaths
 * within CRASH_WINDOW_MS end the service with exit 1 and one line. On SIGTERM/SIGINT the primary asks every
 * worker to stop (they finish requests in flight), waits for them, and exits 0. Workers exit when the primary
 * dies (node:cluster ends a worker whose IPC channel to the primary closes). It also answers the workers'
 * requests for the whole service's metrics (src/service/cluster-metrics.ts).
 */
import cluster, { type Worker } from "node:cluster";
import { AggregatorRegistry, type PrometheusContentType } from "prom-client";
import { answerMetricsRequests } from "../service/cluster-metrics.js";
import { untilSignal } from "./shutdown.js";

const CRASH_LIMIT = 5;
const CRASH_WINDOW_MS = 60_000;
const BACKOFF_BASE_MS = 250;
const BACKOFF_MAX_MS = 30_000;

/** Messages between a worker and the primary. */
export type WorkerMessage = { portier: "listening"; url: string; adminUrl?: string; grpcAddress?: string } | { portier: "start_failed"; message: string } | { portier: "shutdown" };

function log(level: number, event: string, msg: string, fields: Record<string, unknown> = {}): void {
  process.stdout.write(`${JSON.stringify({ level, time: Date.now(), pid: process.pid, event, ...fields, msg })}\n`);
}

export function superviseWorkers(workers: number, shutdownTimeoutMs: number): Promise<number> {
  return new Promise<number>((resolve) => {
    let state: "starting" | "running" | "stopping" | "done" = "starting";
    let exitCode = 0;
    const crashes: number[] = [];
    const respawns = new Set<NodeJS.Timeout>();
    const startFailures = new Map<number, string>();
    // Our own list: cluster.workers keeps a dead worker until its IPC channel's 'disconnect' is processed,
    // which may come after its 'exit'.
    const live = new Set<Worker>();
    // A scrape of /metrics lands on one worker, which asks here for every worker's metrics.
    const aggregator = new AggregatorRegistry<PrometheusContentType>();
    const alive = (): Worker[] => [...live];

    const finish = (code: number) => {
      if (state === "done") return;
      state = "done";
      clearTimeout(hardStop);
      resolve(code);
    };
    let hardStop: NodeJS.Timeout | undefined;
    const stopAll = (code: number) => {
      if (state === "stopping" || state === "done") return;
      state = "stopping";
      exitCode = code;
      for (const t of respawns) clearTimeout(t);
      for (const w of alive()) {
        try {
          w.send({ portier: "shutdown" } satisfies WorkerMessage);
        } catch {
          w.process.kill("SIGTERM");
        }
      }
      if (alive().length === 0) return finish(code);
      // Workers force their connections closed after the shutdown timeout; this is the net under that.
      hardStop = setTimeout(() => {
        for (const w of alive()) w.process.kill("SIGKILL");
        process.stderr.write(`portier serve: workers did not stop within ${Math.round(shutdownTimeoutMs / 1000) + 5} s; killed them\n`);
        finish(1);
      }, shutdownTimeoutMs + 5000);
    };

    const fork = () => {
      const w = cluster.fork();
      live.add(w);
      answerMetricsRequests(w, aggregator);
      w.on("message", (m: WorkerMessage) => {
        if (m?.portier === "listening") {
          log(30, "worker_listening", "worker listening", { worker: w.id, workerPid: w.process.pid });
          if (state === "starting") {
            state = "running";
            // Workers share the primary's handle, so every worker reports the same URL.
            log(30, "listening", "listening", { url: m.url, ...(m.adminUrl ? { adminUrl: m.adminUrl } : {}), ...(m.grpcAddress ? { grpcAddress: m.grpcAddress } : {}), workers });
          }
        } else if (m?.portier === "start_failed") {
          startFailures.set(w.id, m.message);
          if (state === "starting") {
            process.stderr.write(`portier serve: ${m.message}\n`);
            stopAll(1);
          }
        }
      });
    };

    cluster.on("exit", (worker, code, signal) => {
      live.delete(worker);
      if (state === "stopping") {
        if (alive().length === 0) finish(exitCode);
        return;
      }
      if (state === "done") return;
      const now = Date.now();
      crashes.push(now);
      while ((crashes[0] ?? now) < now - CRASH_WINDOW_MS) crashes.shift();
      const why = startFailures.get(worker.id) ?? (signal ? `killed by ${signal}` : `exit code ${code}`);
      if (crashes.length >= CRASH_LIMIT) {
        process.stderr.write(`portier serve: workers died ${crashes.length} times within ${CRASH_WINDOW_MS / 1000} s (last: ${why}); stopping the service\n`);
        stopAll(1);
        return;
      }
      const delay = Math.min(BACKOFF_BASE_MS * 2 ** (crashes.length - 1), BACKOFF_MAX_MS);
      log(40, "worker_exit", "worker died; starting another", { worker: worker.id, workerPid: worker.process.pid, reason: why, restartInMs: delay });
      const t = setTimeout(() => {
        respawns.delete(t);
        if (state === "starting" || state === "running") fork();
      }, delay);
      respawns.add(t);
    });

    void untilSignal().then((signal) => {
      log(30, "stopping", "stopping", { signal });
      stopAll(0);
    });
    for (let i = 0; i < workers; i++) fork();
  });
}
