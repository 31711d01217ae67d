/**
 * Where every AuthZEN evaluation is recorded: today's decision recorder (src/service/decide/run.ts), the one /decide
 * uses, so that an evaluation counts in the metrics (by endpoint: the `adapter` label), writes its decision record
 * to the decision log's sinks (one per item of a batch), ends its span and is offered to the shadow candidate, like
 * any other decision.
 */
import type { Logger } from "pino";
import { decisionLine } from "../decision-logs/line.js";
import type { DecisionRecordSink } from "../decide/record.js";
import { createRecorder, type Recorder } from "../decide/run.js";
import type { ServiceMetrics } from "../metrics.js";
import type { Shadow } from "../shadow/shadow.js";

export interface RecordDeps {
  logger: Logger;
  metrics: ServiceMetrics | undefined;
  revision: () => string | undefined;
  decisionLog?: DecisionRecordSink | undefined;
  shadow?: Pick<Shadow, "take"> | undefined;
}

export function recordDecisions(deps: RecordDeps): Recorder {
  const sink = deps.decisionLog ?? { record: (r) => deps.logger.info(decisionLine(r), "decision") };
  return createRecorder(deps.metrics, deps.revision, sink, deps.shadow);
}
