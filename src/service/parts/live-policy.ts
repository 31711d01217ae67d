/**
 * The policy serving decisions: the bundle from --bundle (watched) or --bundle-url (polled), verified with
 * --verification-key when set. A bundle server that is down at start leaves the service not ready (and
 * polling); a bad file stops the start.
 */
import type { Logger } from "pino";
import { codeOf, messageOf } from "../../errors/caught.js";
import { InputFileError, readInputFileSync } from "../../files/read-input-file.js";
import { parseVerificationKey, type VerificationKey } from "../../engine/index.js";
import type { ServiceConfig } from "../config.js";
import type { Part } from "../part-stack.js";
import { PolicyHolder } from "../policy.js";
import { StartError } from "../start-error.js";

/** The largest --verification-key file: a PEM public key is a few KiB. */
const MAX_KEY_FILE_BYTES = 64 * 1024;

/** --verification-key, read once at start (a bad one is a start-up failure). */
export function readVerificationKey(config: ServiceConfig): VerificationKey | undefined {
  if (config.verificationKey === undefined) return undefined;
  try {
    return parseVerificationKey(
      readInputFileSync(config.verificationKey, MAX_KEY_FILE_BYTES).toString("utf8"),
      config.verificationKey,
      config.verificationAlg,
    );
  } catch (err) {
    if (err instanceof InputFileError) throw new StartError(`config.verificationKey: ${err.message}`);
    const code = codeOf(err);
    throw new StartError(
      `config.verificationKey: ${code ? `${config.verificationKey}: cannot read (${code})` : messageOf(err)}`,
    );
  }
}

/** `memoCounts`: one tally of memo hits and misses for every engine this process loads (outlives reloads). */
export async function livePolicy(
  config: ServiceConfig,
  logger: Logger,
  verificationKey: VerificationKey | undefined,
  memoCounts: { hits: number; misses: number },
): Promise<Part<PolicyHolder>> {
  const policy = new PolicyHolder(
    logger,
    config.bundleUrl
      ? { url: config.bundleUrl, pollSeconds: config.bundlePollSeconds }
      : { file: config.bundle, watch: config.watch },
    config.bundleMaxBytes,
    verificationKey,
    { entries: config.decisionMemoEntries, counts: memoCounts },
  );
  // Not yet on the stack: a start that fails here closes what it opened.
  const started = await policy.start().catch(async (err: unknown) => {
    await policy.close();
    throw err;
  });
  if (!started && !config.bundleUrl) {
    await policy.close();
    throw new StartError(`config.bundle: ${policy.status().lastError}`);
  }
  return { value: policy, close: { parts: () => policy.close() } };
}
