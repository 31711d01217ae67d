/**
 * The shadow candidate (--shadow-bundle or --shadow-bundle-url), when one is configured: a candidate that cannot
 * be loaded is a problem on /ready, never a start-up failure. It closes with the parts, before the sinks, so the
 * decisions still waiting for it are evaluated and their lines written before the decision log ends.
 */
import type { Logger } from "pino";
import type { VerificationKey } from "../../engine/index.js";
import type { ServiceConfig } from "../config.js";
import type { Part } from "../part-stack.js";
import { startShadow, type RunningShadow } from "../shadow/start-shadow.js";

export async function shadowCandidate(
  config: ServiceConfig,
  logger: Logger,
  verificationKey: VerificationKey | undefined,
): Promise<Part<RunningShadow | undefined>> {
  const shadow = await startShadow(config, logger, verificationKey);
  return { value: shadow, close: shadow && { parts: () => shadow.close() } };
}
