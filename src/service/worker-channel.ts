/**
 * Messages from the cluster primary to a worker over its IPC channel, never thrown and never an unheard 'error':
 * to a worker whose channel has closed (it is exiting, its 'exit' not yet seen by the primary) a bare `send`
 * emits an 'error' event on the Worker a tick later, which, unheard, ends the primary with a stack trace. Such a
 * worker is skipped ("closed"); a send that fails later goes to the callback; one that throws is "failed", and the
 * caller decides what that means (the supervisor stops the worker; a metrics answer is dropped).
 */

/** The part of a node:cluster Worker a message needs. */
export interface WorkerChannel {
  isConnected(): boolean;
  send(message: unknown, callback: (err: Error | null) => void): unknown;
}

export type SendOutcome = "sent" | "closed" | "failed";

export function sendToWorker(worker: WorkerChannel, message: unknown): SendOutcome {
  if (!worker.isConnected()) return "closed";
  try {
    worker.send(message, () => undefined);
    return "sent";
  } catch {
    return "failed";
  }
}
