/**
 * What a service has started, part by part, and the one way it is released: each part (keys, policy, directory,
 * HTTP port, ...) is pushed with what closes it, and close() runs the stop in stages whether the start failed
 * half-way or the service ran: first the ports stop accepting, then the accepted connections are answered, then
 * the parts close, then the sinks write what they hold, and the process's own log ends last. Within a stage every
 * close runs side by side (newest first started); a close that throws does not keep the others from running. The
 * shape of TC39's AsyncDisposableStack, with stages (which it has not).
 */

/** The stages of a stop, in order. */
export const STAGES = ["accept", "drain", "parts", "sinks", "log"] as const;
export type Stage = (typeof STAGES)[number];

/** What a close is told: when the stop must be over (epoch ms), and whether the service had started. */
export interface Stop {
  deadline: number;
  started: boolean;
}

export type Close = (stop: Stop) => unknown;

/** A started part: its value, and what closes it in each stage it takes part in. */
export interface Part<T> {
  value: T;
  close?: Partial<Record<Stage, Close>> | undefined;
}

export class PartStack {
  private readonly closes: { stage: Stage; close: Close }[] = [];

  /** Starts a part (a failure throws, leaving what started before it on the stack) and keeps its closes. */
  async use<T>(start: () => Part<T> | Promise<Part<T>>): Promise<T> {
    const part = await start();
    for (const stage of STAGES) {
      const close = part.close?.[stage];
      if (close) this.closes.push({ stage, close });
    }
    return part.value;
  }

  /** Runs every close once, stage by stage (see the header); a second call finds nothing left. */
  async close(stop: Stop): Promise<void> {
    const closes = this.closes.splice(0).reverse();
    for (const stage of STAGES) {
      await Promise.all(
        closes
          .filter((c) => c.stage === stage)
          .map(async ({ close }) => {
            try {
              await close(stop);
            } catch {
              // A failed start reports its own error; a stop goes on with the other parts.
            }
          }),
      );
    }
  }
}
