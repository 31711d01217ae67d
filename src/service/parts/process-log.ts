/**
 * The process's log: pino on a bounded stdout destination. Decision lines are buffered (one write per 4 KiB
 * instead of one per decision), flushed at least every 200 ms and on exit, and capped: with stdout not drained,
 * lines past the cap are dropped and counted. It ends last, once every other part and sink has written.
 */
import { pino, type DestinationStream, type Logger } from "pino";
import { BoundedLogDestination } from "../bounded-log-destination.js";
import type { ServiceConfig } from "../config.js";
import type { Part } from "../part-stack.js";

export interface ProcessLog {
  logger: Logger;
  /** The stdout destination (its counts are metrics), also when `logger` writes elsewhere. */
  destination: BoundedLogDestination;
}

/**
 * `logger` replaces the service's logger entirely (tests); `logDestination` keeps it (level, redaction) and
 * writes its lines elsewhere (portier dev: readable lines).
 */
export function processLog(
  config: ServiceConfig,
  options: { logger?: Logger | undefined; logDestination?: DestinationStream | undefined },
): Part<ProcessLog> {
  // Opening process.stdout first makes fd 1 non-blocking when it is a pipe or socket (see the destination).
  void process.stdout;
  const destination = new BoundedLogDestination({ fd: 1, maxBufferBytes: config.logBufferBytes });
  const flushOnExit = (): void => destination.flushSync();
  process.once("exit", flushOnExit);
  const logger =
    options.logger ??
    pino(
      {
        level: config.logLevel,
        base: { pid: process.pid },
        redact: {
          paths: ["token", "authorization", "headers.authorization", "req.headers.authorization"],
          remove: true,
        },
      },
      options.logDestination ?? destination,
    );
  return {
    value: { logger, destination },
    close: {
      // A failed start keeps what was logged (flushed now), not the exit hook of a service that never ran.
      log: async ({ started }) => {
        if (started) await destination.end(1000);
        else flushOnExit();
        process.off("exit", flushOnExit);
      },
    },
  };
}
