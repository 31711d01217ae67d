/**
 * The decision line on stdout (--decision-log-stdout, on by default), written by the process's logger: bounded
 * by the log destination (--log-buffer-bytes), whose dropped lines are counted (portier_log_lines_dropped_total).
 */
import type { Logger } from "pino";
import type { ServiceConfig } from "../config.js";
import { decisionLine } from "./line.js";
import { decisionLineWriter } from "./line-writer.js";
import type { DecisionSink } from "./sink.js";

export function stdoutSink(config: Pick<ServiceConfig, "decisionLogStdout">, logger: Logger): DecisionSink | undefined {
  if (!config.decisionLogStdout) return undefined;
  // pino's line, encoded in one step when the logger's lines are plain (line-writer.ts), else by logger.info.
  const fast = decisionLineWriter(logger);
  return {
    wantsEvent: false,
    write: ({ record }) => {
      if (!fast?.(record)) logger.info(decisionLine(record), "decision");
    },
  };
}
