/**
 * The decision log: the stdout line and, with --decision-log-url, the collector (a token file that cannot be
 * read stops the start). It closes with the sinks: what was recorded is written and shipped, retried until the
 * stop's deadline.
 */
import type { Logger } from "pino";
import { messageOf } from "../../errors/caught.js";
import type { ServiceConfig } from "../config.js";
import { createDecisionLogs, type DecisionLogs } from "../decision-logs/index.js";
import type { Part } from "../part-stack.js";
import type { PolicyHolder } from "../policy.js";
import { StartError } from "../start-error.js";

export function decisionLog(config: ServiceConfig, logger: Logger, policy: PolicyHolder): Part<DecisionLogs> {
  let logs: DecisionLogs;
  try {
    logs = createDecisionLogs(config, logger, () => policy.engine?.logRules);
  } catch (err) {
    throw new StartError(`config.decisionLogTokenFile: ${messageOf(err)}`);
  }
  return { value: logs, close: { sinks: ({ deadline }) => logs.close(deadline) } };
}
