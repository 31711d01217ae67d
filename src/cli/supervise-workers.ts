/**
 * The node:cluster primary of `portier serve --workers N`: forks N workers and keeps them running. A start-up
 * failure of the first workers is printed once (one line on stderr) and ends the service with exit 2; a worker
 * that dies later is replaced after an exponential back-off, and CRASH_LIMIT deaths within CRASH_WINDOW_MS end
 * the service with exit 2 and one line. Workers exit when the primary dies (node:cluster ends a worker whose IPC
 * channel to the primary closes). It also answers the workers' requests for the whole service's metrics
 * (src/service/cluster-metrics.ts).
 *
 * The primary owns the decision port and the gRPC port (not node:cluster's round-robin handle, which closes the
 * connections it has accepted but not yet handed over when the last worker closes its server): it listens once
 * the first worker is ready, accepts, and hands each connection round-robin to a ready worker, which acknowledges it
 * (until then the primary keeps its copy and hands it to another worker if that one dies). On SIGTERM/SIGINT:
 * every worker starts stopping (/ready 503), the primary keeps handing connections over for --shutdown-delay,
 * accepts what already connected and closes the port, waits until every accepted connection is acknowledged,
 * then tells the workers to finish (they answer every connection they were given) and exits 0 once they have.
 */
import { EXIT } from "./exit-codes.js";
import cluster, { type Worker } from "node:cluster";
import { createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { AggregatorRegistry, type PrometheusContentType } from "prom-client";
import { answerMetricsRequests } from "../service/cluster-metrics.js";
import { sendToWorker } from "../service/worker-channel.js";
import { listenFailure, stopAccepting } from "../service/index.js";
import { untilSignal } from "./shutdown.js";

const CRASH_LIMIT = 5;
const CRASH_WINDOW_MS = 60_000;
const BACKOFF_BASE_MS = 250;
const BACKOFF_MAX_MS = 30_000;

/** Accepted connections waiting for a ready worker (none ready: all restarting); more are refused (closed). */
const MAX_WAITING_CONNECTIONS = 4096;

/**
 * Messages between a worker and the primary: a worker is ready (`listening`) or could not start; a connection
 * handed over (with its socket) and its acknowledgement; the first step of a stop (`stopping`: /ready 503, still
 * serving), then `shutdown`: no more connections will come, answer those given and exit within graceMs.
 */
export type WorkerMessage =
  | { portier: "listening"; adminUrl?: string; grpcAddress?: string }
  | { portier: "start_failed"; message: string }
  | { portier: "connection"; id: number; port: HandedPort }
  | { portier: "connection_taken"; id: number }
  | { portier: "stopping" }
  | { portier: "shutdown"; graceMs: number };

/** Which of the primary's ports a handed-over connection came from. */
export type HandedPort = "http" | "grpc";

export interface SuperviseOptions {
  workers: number;
  host: string;
  port: number;
  /** --grpc-host and --grpc-port, when the gRPC port is on: the primary owns it too. */
  grpc?: { host: string; port: number } | undefined;
  shutdownTimeoutMs: number;
  shutdownDelayMs: number;
}

/**
 * Sends `message` to a worker without ever throwing or crashing the primary (src/service/worker-channel.ts). A
 * worker whose channel has closed is skipped: it stops by itself (the primary is gone for it), and its 'exit' is
 * handled here; one whose send throws is stopped.
 */
export function tellWorker(worker: Worker, message: WorkerMessage): void {
  if (sendToWorker(worker, message) === "failed") worker.process.kill("SIGTERM");
}

function log(level: number, event: string, msg: string, fields: Record<string, unknown> = {}): void {
  process.stdout.write(`${JSON.stringify({ level, time: Date.now(), pid: process.pid, event, ...fields, msg })}\n`);
}

/** Hands accepted connections to ready workers, round-robin, each kept here until its worker acknowledges it. */
class ConnectionHandoff {
  private readonly ready: Worker[] = [];
  private next = 0;
  private seq = 0;
  private readonly unacknowledged = new Map<number, { socket: Socket; port: HandedPort; worker: Worker }>();
  private readonly waiting: { socket: Socket; port: HandedPort }[] = [];
  private settledWaiters: Array<() => void> = [];

  /** A worker that reported ready takes connections (first those that waited for one). */
  add(worker: Worker): void {
    this.ready.push(worker);
    for (const { socket, port } of this.waiting.splice(0)) this.handOff(socket, port);
  }

  /** A worker that died: the connections it did not acknowledge go to another. */
  remove(worker: Worker): void {
    const i = this.ready.indexOf(worker);
    if (i >= 0) this.ready.splice(i, 1);
    for (const [id, h] of this.unacknowledged) if (h.worker === worker) this.retry(id);
  }

  handOff(socket: Socket, port: HandedPort): void {
    const worker = this.ready[this.next++ % Math.max(1, this.ready.length)];
    if (!worker) {
      if (this.waiting.length < MAX_WAITING_CONNECTIONS) this.waiting.push({ socket, port });
      else socket.destroy();
      return;
    }
    const id = ++this.seq;
    this.unacknowledged.set(id, { socket, port, worker });
    // keepOpen: this copy stays open until the worker says it has the connection (or dies without).
    worker.send({ portier: "connection", id, port } satisfies WorkerMessage, socket, { keepOpen: true }, (err) => {
      if (err) this.retry(id);
    });
  }

  /** The worker has the connection: close this process's copy of it (the connection stays open there). */
  taken(id: number): void {
    const h = this.unacknowledged.get(id);
    if (!h) return;
    this.unacknowledged.delete(id);
    h.socket.destroy();
    this.checkSettled();
  }

  /** Resolves when every accepted connection is with a worker (or waits for none), or at the deadline. */
  settled(deadline: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(resolve, Math.max(0, deadline - Date.now()));
      this.settledWaiters.push(() => {
        clearTimeout(t);
        resolve();
      });
      this.checkSettled();
    });
  }

  private retry(id: number): void {
    const h = this.unacknowledged.get(id);
    if (!h) return;
    this.unacknowledged.delete(id);
    const i = this.ready.indexOf(h.worker);
    if (i >= 0) this.ready.splice(i, 1);
    this.handOff(h.socket, h.port);
    this.checkSettled();
  }

  private checkSettled(): void {
    if (this.unacknowledged.size > 0 || (this.waiting.length > 0 && this.ready.length > 0)) return;
    for (const w of this.settledWaiters.splice(0)) w();
  }
}

/** Worker deaths within CRASH_WINDOW_MS: how long to wait before the next start, or undefined past CRASH_LIMIT. */
class CrashWindow {
  private readonly times: number[] = [];

  get count(): number {
    return this.times.length;
  }

  /** Records a death now; the back-off before replacing it, or undefined when the service must stop. */
  died(): number | undefined {
    const now = Date.now();
    this.times.push(now);
    while ((this.times[0] ?? now) < now - CRASH_WINDOW_MS) this.times.shift();
    if (this.times.length >= CRASH_LIMIT) return undefined;
    return Math.min(BACKOFF_BASE_MS * 2 ** (this.times.length - 1), BACKOFF_MAX_MS);
  }
}

type SupervisorState = "starting" | "running" | "stopping" | "done";

/** The primary's state and its reactions: to a worker's message, to a worker's death, to a signal. */
class Supervisor {
  private state: SupervisorState = "starting";
  private exitCode = 0;
  private readonly crashes = new CrashWindow();
  private readonly respawns = new Set<NodeJS.Timeout>();
  private readonly startFailures = new Map<number, string>();
  /**
   * Our own list: cluster.workers keeps a dead worker until its IPC channel's 'disconnect' is processed, which
   * may come after its 'exit'.
   */
  private readonly live = new Set<Worker>();
  /** A scrape of /metrics lands on one worker, which asks here for every worker's metrics. */
  private readonly aggregator = new AggregatorRegistry<PrometheusContentType>();
  private readonly handoff = new ConnectionHandoff();
  private readonly listeners: Partial<Record<HandedPort, Server>> = {};
  private hardStop: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: SuperviseOptions,
    private readonly resolve: (code: number) => void,
  ) {}

  private alive(): Worker[] {
    return [...this.live];
  }

  private broadcast(m: WorkerMessage): void {
    for (const w of this.alive()) tellWorker(w, m);
  }

  private finish(code: number): void {
    if (this.state === "done") return;
    this.state = "done";
    clearTimeout(this.hardStop);
    this.listeners.http?.close();
    this.listeners.grpc?.close();
    this.resolve(code);
  }

  /** The stop, in steps; `delayMs` is --shutdown-delay for a signal, 0 when the service cannot start. */
  async stopAll(code: number, delayMs: number): Promise<void> {
    if (this.state === "stopping" || this.state === "done") return;
    this.state = "stopping";
    this.exitCode = code;
    const { shutdownTimeoutMs } = this.options;
    const deadline = Date.now() + shutdownTimeoutMs;
    for (const t of this.respawns) clearTimeout(t);
    // Workers force their connections closed by the deadline; this is the net under that.
    this.hardStop = setTimeout(() => {
      for (const w of this.alive()) w.process.kill("SIGKILL");
      process.stderr.write(
        `portier serve: workers did not stop within ${Math.round(shutdownTimeoutMs / 1000) + 5} s; killed them\n`,
      );
      this.finish(EXIT.error);
    }, shutdownTimeoutMs + 5000);
    // 1. /ready 503 and Connection: close in every worker; connections are still accepted and handed over.
    this.broadcast({ portier: "stopping" });
    // 2. --shutdown-delay.
    if (delayMs > 0) await new Promise((r) => setTimeout(r, Math.min(delayMs, shutdownTimeoutMs)));
    // 3. Accept what already connected, close the port, and see every accepted connection to a worker.
    await Promise.all(Object.values(this.listeners).map((l) => stopAccepting(l)));
    await this.handoff.settled(deadline);
    // 4. The workers answer what they were given and exit.
    this.broadcast({ portier: "shutdown", graceMs: Math.max(0, deadline - Date.now()) });
    if (this.alive().length === 0) this.finish(code);
  }

  /**
   * One of the primary's ports (the decision port, or --grpc-port), once a worker is ready to take its
   * connections: its address, or undefined when it could not be bound (a start-up failure, the service ends).
   */
  private listenOn(which: HandedPort, bindHost: string, bindPort: number): Promise<string | undefined> {
    const server = createServer({ pauseOnConnect: true, noDelay: true }, (socket) =>
      this.handoff.handOff(socket, which),
    );
    this.listeners[which] = server;
    return new Promise<string | undefined>((resolve) => {
      const startFailed = (err: NodeJS.ErrnoException) => {
        delete this.listeners[which];
        const failure =
          which === "http"
            ? listenFailure(err, bindHost, bindPort).message
            : `cannot listen on ${bindHost}:${bindPort} for gRPC: ${err.message}; stop the other process or ` +
              "choose another --grpc-port (or check --grpc-host)";
        process.stderr.write(`portier serve: ${failure}\n`);
        void this.stopAll(EXIT.error, 0);
        resolve(undefined);
      };
      server.once("error", startFailed);
      server.listen(bindPort, bindHost, () => {
        server.off("error", startFailed);
        // Once listening, an error is one failed accept (such as EMFILE): reported, the port stays open.
        server.on("error", (err: Error) =>
          log(50, "accept_failed", "accepting a connection failed", { error: err.message, port: which }),
        );
        const addr = server.address() as AddressInfo;
        const at = addr.address.includes(":") ? `[${addr.address}]` : addr.address;
        resolve(which === "http" ? `http://${at}:${addr.port}` : `${at}:${addr.port}`);
      });
    });
  }

  /** Both ports; undefined when one could not be bound. */
  private async listen(): Promise<{ url: string; grpcAddress?: string } | undefined> {
    const { host, port, grpc } = this.options;
    const url = await this.listenOn("http", host, port);
    if (url === undefined || !grpc) return url === undefined ? undefined : { url };
    const grpcAddress = await this.listenOn("grpc", grpc.host, grpc.port);
    return grpcAddress === undefined ? undefined : { url, grpcAddress };
  }

  fork(): void {
    const w = cluster.fork();
    this.live.add(w);
    // Any other failure of its IPC channel: logged, never an unheard 'error' that ends the primary.
    w.on("error", (err: Error) =>
      log(40, "worker_channel_error", "a message to a worker failed", { worker: w.id, error: err.message }),
    );
    answerMetricsRequests(w, this.aggregator);
    w.on("message", (m: WorkerMessage) => this.message(w, m));
  }

  private message(w: Worker, m: WorkerMessage): void {
    if (m?.portier === "connection_taken") this.handoff.taken(m.id);
    else if (m?.portier === "listening") this.workerListening(w, m);
    else if (m?.portier === "start_failed") {
      this.startFailures.set(w.id, m.message);
      if (this.state === "starting") {
        process.stderr.write(`portier serve: ${m.message}\n`);
        void this.stopAll(EXIT.error, 0);
      }
    }
  }

  /** A worker is ready: it takes connections; the first one opens the primary's ports. */
  private workerListening(w: Worker, m: Extract<WorkerMessage, { portier: "listening" }>): void {
    log(30, "worker_listening", "worker listening", { worker: w.id, workerPid: w.process.pid });
    if (this.state === "done" || !this.live.has(w)) return;
    this.handoff.add(w);
    if (this.state !== "starting") return;
    this.state = "running";
    void this.listen().then((bound) => {
      // The admin port is node:cluster's, shared by the workers, so each reports the same one.
      if (bound !== undefined && this.state === "running")
        log(30, "listening", "listening", {
          url: bound.url,
          ...(m.adminUrl ? { adminUrl: m.adminUrl } : {}),
          ...(bound.grpcAddress ? { grpcAddress: bound.grpcAddress } : {}),
          workers: this.options.workers,
        });
    });
  }

  /** A worker exited: the last of a stop ends the service; one that died is replaced after a back-off. */
  exited(worker: Worker, code: number, signal: string): void {
    this.live.delete(worker);
    this.handoff.remove(worker);
    if (this.state === "stopping") {
      if (this.alive().length === 0) this.finish(this.exitCode);
      return;
    }
    if (this.state === "done") return;
    const delay = this.crashes.died();
    const why = this.startFailures.get(worker.id) ?? (signal ? `killed by ${signal}` : `exit code ${code}`);
    if (delay === undefined) {
      process.stderr.write(
        `portier serve: workers died ${this.crashes.count} times within ${CRASH_WINDOW_MS / 1000} s (last: ` +
          `${why}); stopping the service\n`,
      );
      void this.stopAll(EXIT.error, 0);
      return;
    }
    log(40, "worker_exit", "worker died; starting another", {
      worker: worker.id,
      workerPid: worker.process.pid,
      reason: why,
      restartInMs: delay,
    });
    const t = setTimeout(() => {
      this.respawns.delete(t);
      if (this.state === "starting" || this.state === "running") this.fork();
    }, delay);
    this.respawns.add(t);
  }
}

/** Forks the workers and supervises them until the service ends; resolves with its exit code. */
export function superviseWorkers(options: SuperviseOptions): Promise<number> {
  return new Promise<number>((resolve) => {
    const supervisor = new Supervisor(options, resolve);
    cluster.on("exit", (worker, code, signal) => supervisor.exited(worker, code, signal));
    void untilSignal().then((signal) => {
      log(30, "stopping", "stopping", { signal });
      void supervisor.stopAll(0, options.shutdownDelayMs);
    });
    for (let i = 0; i < options.workers; i++) supervisor.fork();
  });
}
