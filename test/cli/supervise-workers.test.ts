/**
 * The primary's messages to its workers (src/cli/supervise-workers.ts): a message to a worker whose IPC channel
 * has closed but whose exit is not yet seen (a worker that failed to start, under load) must not become an
 * 'error' on the Worker, which unheard ended the primary with a 20-line stack trace after its one-line message.
 */
import cluster, { type Worker } from "node:cluster";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { tellWorker } from "../../src/cli/supervise-workers.js";

const forked: Worker[] = [];
afterAll(async () => {
  const alive = forked.filter((w) => !w.isDead());
  await Promise.all(alive.map((w) => new Promise((r) => (w.once("exit", r), w.process.kill("SIGKILL")))));
});

describe("tellWorker", () => {
  it("to a worker whose channel closed: nothing thrown, no 'error' event on the Worker", async () => {
    cluster.setupPrimary({
      exec: fileURLToPath(new URL("./fixtures/closed-channel-worker.mjs", import.meta.url)),
      silent: true,
    });
    const w = cluster.fork();
    forked.push(w);
    const errors: Error[] = [];
    w.on("error", (err: Error) => errors.push(err));
    await new Promise((r) => w.once("disconnect", r));
    expect(w.isDead()).toBe(false);

    expect(() => tellWorker(w, { portier: "stopping" })).not.toThrow();
    expect(() => tellWorker(w, { portier: "shutdown", graceMs: 0 })).not.toThrow();
    // A failed send reports its error on the next ticks.
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    expect(errors.map((e) => e.message)).toEqual([]);
  });
});
