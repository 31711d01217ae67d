/**
 * A pool of worker threads, each with its own policy instance, for callers that want evaluation off
 * their event loop. Requests go to the worker with the fewest in flight. A worker that dies is replaced
 * and its pending requests are answered with a deny (fail closed).
 * Measured by `make bench` against the in-process engine: see the README for when it pays.
 */
import { Worker } from "node:worker_threads";
import { engineDeny } from "./deny.js";
import type { CatalogRole, Decision, DecisionEngine, DecisionInput } from "./types.js";

interface Slot {
  worker: Worker;
  pending: Map<number, (d: Decision) => void>;
}

const runningTs = import.meta.url.endsWith(".ts");
const WORKER_URL = new URL(runningTs ? "./engine-worker.ts" : "./engine-worker.js", import.meta.url);

export class WorkerPoolEngine implements DecisionEngine {
  readonly revision: string;
  private readonly slots: Slot[] = [];
  private nextId = 1;
  private closed = false;

  private constructor(
    private readonly bytes: Uint8Array,
    private readonly source: string,
    revision: string,
    readonly roles: readonly CatalogRole[],
  ) {
    this.revision = revision;
  }

  static async start(bytes: Uint8Array, source: string, revision: string, size: number, roles: readonly CatalogRole[]): Promise<WorkerPoolEngine> {
    const pool = new WorkerPoolEngine(bytes, source, revision, roles);
    await Promise.all(Array.from({ length: size }, () => pool.spawn()));
    return pool;
  }

  private spawn(): Promise<void> {
    const workerData = { bytes: this.bytes, source: this.source };
    // Run from TypeScript sources (tests, tsx), the worker registers tsx before importing its module.
    const worker = runningTs
      ? new Worker(`import("tsx/esm/api").then((t) => { t.register(); return import(${JSON.stringify(WORKER_URL.href)}); })`, { eval: true, workerData })
      : new Worker(WORKER_URL, { workerData });
    const slot: Slot = { worker, pending: new Map() };
    this.slots.push(slot);
    return new Promise((resolve, reject) => {
      worker.on("message", (msg: { ready?: boolean; id?: number; decision?: Decision }) => {
        if (msg.ready) return resolve();
        const done = slot.pending.get(msg.id as number);
        slot.pending.delete(msg.id as number);
        done?.(msg.decision as Decision);
      });
      worker.on("error", (err) => reject(err));
      worker.on("exit", () => {
        const i = this.slots.indexOf(slot);
        if (i !== -1) this.slots.splice(i, 1);
        for (const done of slot.pending.values()) done(engineDeny("policy_error", "the policy worker stopped during evaluation"));
        slot.pending.clear();
        if (!this.closed) void this.spawn().catch(() => undefined);
      });
    });
  }

  decide(input: DecisionInput): Promise<Decision> {
    let best: Slot | undefined;
    for (const slot of this.slots) if (!best || slot.pending.size < best.pending.size) best = slot;
    if (!best) return Promise.resolve(engineDeny("policy_error", "no policy worker is running"));
    const id = this.nextId++;
    const slot = best;
    return new Promise((resolve) => {
      slot.pending.set(id, resolve);
      slot.worker.postMessage({ id, input });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}
