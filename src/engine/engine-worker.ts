/**
 * Worker-thread side of the worker pool: loads the bundle once and answers decisions by message.
 */
import { parentPort, workerData } from "node:worker_threads";
import { readBundle } from "./read-bundle.js";
import { InProcessEngine, DECISION_ENTRYPOINT } from "./in-process-engine.js";
import type { DecisionInput } from "./types.js";

interface WorkerInit {
  bytes: Uint8Array;
  source: string;
}

const init = workerData as WorkerInit;
// The loading thread already checked these bytes against the configured size cap.
const bundle = await readBundle(init.bytes, init.source, [DECISION_ENTRYPOINT], { maxBytes: Infinity });
const engine = new InProcessEngine(bundle, init.source);

parentPort?.on("message", (msg: { id: number; input: DecisionInput }) => {
  parentPort?.postMessage({ id: msg.id, decision: engine.decideSync(msg.input) });
});
parentPort?.postMessage({ ready: true });
