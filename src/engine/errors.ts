/**
 * Errors of the engine: a bundle that cannot be loaded (EngineLoadError, thrown), and a policy that cannot
 * be evaluated (PolicyEvaluationError: evaluation never throws, it answers a deny with the public text and
 * keeps the wasm's own text as the internal detail).
 */
import { PortierError } from "../errors/portier-error.js";

const ENGINE_LOAD_ERROR_CODES = [
  "bundle_unreadable",
  "bundle_invalid",
  "bundle_too_large",
  "manifest_invalid",
  "entrypoint_missing",
  "wasm_invalid",
  "data_invalid",
  "signature_invalid",
] as const;

export type EngineLoadErrorCode = (typeof ENGINE_LOAD_ERROR_CODES)[number];

export class EngineLoadError extends PortierError {
  static override readonly code = "bundle_invalid";
  static override get codes(): readonly EngineLoadErrorCode[] {
    return ENGINE_LOAD_ERROR_CODES;
  }
  declare readonly code: EngineLoadErrorCode;

  constructor(code: EngineLoadErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, code });
  }
}

/** The public text of every policy_error deny; what went wrong is in `detail`. */
export const POLICY_ERROR_MESSAGE = "the policy could not make a decision";

/** The policy failed to evaluate (a wasm trap, an abort) or answered no decision; `detail` says which. */
export class PolicyEvaluationError extends PortierError {
  static override readonly code = "policy_error";
  constructor(detail: string) {
    super(POLICY_ERROR_MESSAGE, { detail });
  }
}
