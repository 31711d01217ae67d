/**
 * The decision log of one service process, from its options: the stdout line (--decision-log-stdout), the
 * collector (--decision-log-url, shipper.ts) and the bundle's mask and drop rules (pipeline.ts). With
 * --workers N every worker ships the events of the decisions it took itself: each event is in one worker's
 * buffer only, so it is shipped once, without crossing the IPC channel; each worker flushes its buffer in its
 * own stop.
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import { packageVersion } from "../../files/package-version.js";
import type { LogRules } from "../../engine/index.js";
import type { ServiceConfig } from "../config.js";
import type { DecisionRecord, DecisionRecordSink } from "../decide/record.js";
import { collectorSink } from "./collector-sink.js";
import { DecisionLogPipeline } from "./pipeline.js";
import type { DecisionSink } from "./sink.js";
import { operatorLabels } from "./labels.js";
import { newStats, type DecisionLogStats } from "./stats.js";
import { stdoutSink } from "./stdout-sink.js";

export { registerDecisionLogMetrics } from "./metrics.js";
export type { DecisionLogStats } from "./stats.js";

export interface DecisionLogs extends DecisionRecordSink {
  /** The request path's part: one call per decision (the recorder's sink). */
  record(record: DecisionRecord): void;
  /** /ready's text when a sink has failed for too long. */
  problem(): string | undefined;
  readonly stats: DecisionLogStats;
  /** Processes what was recorded and has every sink write or send what it holds, until `deadline` (epoch ms). */
  close(deadline: number): Promise<void>;
}

/** The bundle name OPA's `bundles` field reports. */
const BUNDLE_NAME = "portier";

/** Throws TokenFileError when --decision-log-token-file cannot be read (a start-up failure). */
export function createDecisionLogs(
  config: ServiceConfig,
  logger: Logger,
  rules: () => LogRules | undefined,
): DecisionLogs {
  const stats = newStats();
  const labels = { ...operatorLabels(config.decisionLogLabel), id: randomUUID(), version: packageVersion() };
  // The sinks, each on its options (undefined: off).
  const sinks = [stdoutSink(config, logger), collectorSink(config, stats, logger)].filter(
    (s): s is DecisionSink => s !== undefined,
  );
  const pipeline = new DecisionLogPipeline({
    sinks,
    rules,
    event: { labels, bundleName: BUNDLE_NAME },
    stats,
    logger,
  });
  return {
    record: (record) => pipeline.record(record),
    problem: () => {
      const found = sinks.map((s) => s.problem?.()).filter(Boolean);
      return found.length ? `decision logs: ${found.join("; ")}` : undefined;
    },
    stats,
    async close(deadline) {
      pipeline.process();
      await Promise.all(sinks.flatMap((s) => (s.close ? [s.close(deadline)] : [])));
    },
  };
}
