/**
 * The collector (--decision-log-url): each decision's OPA event, buffered, batched and uploaded by the shipper
 * (shipper.ts), bounded by --decision-log-buffer-bytes; what it drops is counted
 * (portier_decision_logs_dropped_total). A token file that cannot be read throws (a start-up failure).
 */
import type { Logger } from "pino";
import type { ServiceConfig } from "../config.js";
import { Shipper } from "./shipper.js";
import type { DecisionSink } from "./sink.js";
import type { DecisionLogStats } from "./stats.js";
import { TokenFile } from "./token-file.js";
import { httpTarget } from "../../reload/index.js";

export function collectorSink(
  config: ServiceConfig,
  stats: DecisionLogStats,
  logger: Logger,
): DecisionSink | undefined {
  if (config.decisionLogUrl === undefined) return undefined;
  const tokenFile = config.decisionLogTokenFile === undefined ? undefined : new TokenFile(config.decisionLogTokenFile);
  const shipper = new Shipper({
    target: httpTarget(config.decisionLogUrl),
    token: () => tokenFile?.current(),
    bufferBytes: config.decisionLogBufferBytes,
    batchBytes: config.decisionLogBatchBytes,
    periodMs: config.decisionLogPeriodSeconds * 1000,
    timeoutMs: config.decisionLogTimeoutSeconds * 1000,
    problemAfterMs: config.decisionLogProblemSeconds * 1000,
    stats,
    logger,
  });
  return {
    wantsEvent: true,
    write: ({ encoded }) => shipper.add(encoded()),
    problem: () => {
      const token = tokenFile?.lastError && `the token file was not read again (${tokenFile.lastError})`;
      return [token, shipper.problem()].filter(Boolean).join("; ") || undefined;
    },
    close: (deadline) => shipper.close(deadline),
  };
}
