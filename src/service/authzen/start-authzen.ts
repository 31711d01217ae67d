/**
 * The AuthZEN endpoints of one service, from its configuration: off (undefined) unless a PEP credential is
 * configured (--authzen-pep-key-file or --authzen-pep-clients); a key file that cannot be read throws (the start
 * fails naming the option). The parts are the service's own: the live policy, the directory, the token verifier,
 * and the recorder of every decision (record-decision.ts).
 */
import type { Logger } from "pino";
import type { AccessTokenVerifier } from "../../auth/index.js";
import type { Directory } from "../../directory/index.js";
import type { ServiceConfig } from "../config.js";
import type { DecisionRecordSink } from "../decide/record.js";
import { TokenFile } from "../decision-logs/token-file.js";
import type { ServiceMetrics } from "../metrics.js";
import type { PolicyHolder } from "../policy.js";
import type { Shadow } from "../shadow/shadow.js";
import type { DecisionTracer } from "../tracing/decision-tracer.js";
import { createEvaluator } from "./evaluate.js";
import { recordDecisions } from "./record-decision.js";
import { createAuthzenRouter, type AuthzenEndpoints } from "./router.js";

export interface AuthzenParts {
  policy: PolicyHolder;
  directory: Directory | undefined;
  verifier: AccessTokenVerifier;
  logger: Logger;
  metrics: ServiceMetrics;
  tracer?: DecisionTracer | undefined;
  decisionLog?: DecisionRecordSink | undefined;
  shadow?: Pick<Shadow, "take"> | undefined;
}

export function startAuthzen(config: ServiceConfig, parts: AuthzenParts): AuthzenEndpoints | undefined {
  const clients = config.authzenPepClients?.split(",").filter((c) => c !== "");
  if (config.authzenPepKeyFile === undefined && !clients?.length) return undefined;
  // A file that cannot be read or holds no key throws (TokenFileError): the caller stops the start with it.
  const keyFile = config.authzenPepKeyFile === undefined ? undefined : new TokenFile(config.authzenPepKeyFile);
  const record = recordDecisions({
    logger: parts.logger,
    metrics: parts.metrics,
    revision: () => parts.policy.engine?.revision,
    decisionLog: parts.decisionLog,
    shadow: parts.shadow,
  });
  const evaluate = createEvaluator({
    policy: parts.policy,
    directory: parts.directory,
    roleCheck: config.roleCheck,
    record,
    tracer: parts.tracer,
  });
  return createAuthzenRouter({
    evaluate,
    credentials: { keyFile, clients, verifier: parts.verifier },
    directory: parts.directory,
    templates: () => parts.policy.engine?.templates ?? [],
    logger: parts.logger,
    pdpId: config.authzenPdpId,
    limits: {
      body: { maxBytes: config.maxBodyBytes, timeoutMs: config.bodyTimeoutMs },
      maxBatch: config.authzenMaxBatch,
      maxPage: config.authzenMaxPage,
      searchBudget: config.authzenSearchBudget,
    },
  });
}
