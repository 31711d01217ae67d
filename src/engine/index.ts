/**
 * The engine: compiled Rego (wasm) bundles in, typed decisions out. Depends on nothing else in Portier.
 */
export { loadEngine } from "./load-engine.js";
export { InProcessEngine, DECISION_ENTRYPOINT, CATALOG_ENTRYPOINT } from "./in-process-engine.js";
export type { PolicyLoader, LoadedPolicy } from "./policy-instance.js";
export { DecisionMemo } from "./decision-memo.js";
export type { DecisionMemoOptions } from "./decision-memo.js";
export { readBundle, inflateAndUntar, DEFAULT_MAX_BUNDLE_BYTES } from "./read-bundle.js";
export { EngineLoadError, POLICY_ERROR_MESSAGE } from "./errors.js";
export {
  signBundleFiles,
  parseVerificationKey,
  canonicalJson,
  DEFAULT_SIGNING_ALG,
  SIGNING_ALGS,
} from "./bundle-signature.js";
export type { VerificationKey } from "./bundle-signature.js";
export { normalisePath, MAX_PATH_BYTES } from "./normalise-path.js";
export type { PathResult } from "./normalise-path.js";
export { tokenFacts, ownClaim } from "./token-facts.js";
export { SPEC_TOKEN_SHAPE, applicationTokenFacts, catalogTokenShape } from "./catalog-token-shape.js";
export { engineDeny } from "./deny.js";
export { compareVerdicts } from "./compare-verdicts.js";
export type { Verdict, VerdictChange } from "./compare-verdicts.js";
export type * from "./types.js";
export type { LogRules } from "./log-rules.js";
export { LOG_RULES_ENTRYPOINT, READS_KEY, READS_ROOT } from "./log-rules.js";
