/**
 * The decision log of one service process, from its options: the stdout line (--decision-log-stdout), the
 * collector (--decision-log-url, shipper.ts) and the bundle's mask and drop rules (pipeline.ts). With
 * --workers N every worker ships the events of the decisions it took itself: each event is in one worker's
 * buffer only, so it is shipped once, without crossing the IPC channel; each worker flushes its buffer in its
 * own stop.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Logger } from "pino";
import type { LogRules } from "../../engine/index.js";
import type { ServiceConfig } from "../config.js";
import type { DecisionLine } from "./event.js";
import { DecisionLogPipeline } from "./pipeline.js";
import { Shipper } from "./shipper.js";
import { newStats, type DecisionLogStats } from "./stats.js";
import { TokenFile } from "./token-file.js";
import { collectorTarget } from "./upload.js";

export { registerDecisionLogMetrics } from "./metrics.js";
export type { DecisionLogStats } from "./stats.js";

export interface DecisionLogs {
  /** The request path's part: one call per decision (the recorder's sink, as the logger's info() is). */
  info(fields: DecisionLine, msg: "decision"): void;
  /** /ready's text when the collector has failed for too long. */
  problem(): string | undefined;
  readonly stats: DecisionLogStats;
  /** Processes what was recorded and uploads what waits, until `deadline` (epoch ms). */
  close(deadline: number): Promise<void>;
}

/** The bundle name OPA's `bundles` field reports. */
const BUNDLE_NAME = "portier";

function portierVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  return pkg.version;
}

/** --decision-log-label "a=1,b=2" as an object. */
function operatorLabels(text: string | undefined): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const pair of (text ?? "").split(",").filter(Boolean)) {
    const eq = pair.indexOf("=");
    labels[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return labels;
}

/** Throws TokenFileError when --decision-log-token-file cannot be read (a start-up failure). */
export function createDecisionLogs(
  config: ServiceConfig,
  logger: Logger,
  rules: () => LogRules | undefined,
): DecisionLogs {
  const stats = newStats();
  const labels = { ...operatorLabels(config.decisionLogLabel), id: randomUUID(), version: portierVersion() };
  let shipper: Shipper | undefined;
  let tokenFile: TokenFile | undefined;
  if (config.decisionLogUrl !== undefined) {
    tokenFile = config.decisionLogTokenFile === undefined ? undefined : new TokenFile(config.decisionLogTokenFile);
    shipper = new Shipper({
      target: collectorTarget(config.decisionLogUrl),
      token: () => tokenFile?.current(),
      bufferBytes: config.decisionLogBufferBytes,
      batchBytes: config.decisionLogBatchBytes,
      periodMs: config.decisionLogPeriodSeconds * 1000,
      timeoutMs: config.decisionLogTimeoutSeconds * 1000,
      problemAfterMs: config.decisionLogProblemSeconds * 1000,
      stats,
      logger,
    });
  }
  const s = shipper;
  const pipeline = new DecisionLogPipeline({
    line: config.decisionLogStdout ? (fields) => logger.info(fields, "decision") : undefined,
    ship: s && ((json) => s.add(json)),
    rules,
    event: { labels, bundleName: BUNDLE_NAME },
    stats,
    logger,
  });
  return {
    info: (fields) => pipeline.record(fields),
    problem: () => {
      const token = tokenFile?.lastError && `the token file was not read again (${tokenFile.lastError})`;
      const found = [token, s?.problem()].filter(Boolean);
      return found.length ? `decision logs: ${found.join("; ")}` : undefined;
    },
    stats,
    async close(deadline) {
      pipeline.process();
      await s?.close(deadline);
    },
  };
}
