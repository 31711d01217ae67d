/**
 * The engine: compiled Rego (wasm) bundles in, typed decisions out. Depends on nothing else in Portier.
 */
export { loadEngine } from "./load-engine.js";
export type { LoadEngineOptions } from "./load-engine.js";
export { InProcessEngine, DECISION_ENTRYPOINT, CATALOG_ENTRYPOINT } from "./in-process-engine.js";
export type { InProcessEngineOptions } from "./in-process-engine.js";
export type { PolicyLoader, LoadedPolicy } from "./policy-instance.js";
export { DecisionMemo, DEFAULT_MEMO_BYTES } from "./decision-memo.js";
export type { DecisionMemoOptions, MemoCounts, MemoStats } from "./decision-memo.js";
export { readBundle, inflateAndUntar, DEFAULT_MAX_BUNDLE_BYTES } from "./read-bundle.js";
export type { Bundle, BundleManifest, ReadBundleOptions } from "./read-bundle.js";
export { EngineLoadError, PolicyEvaluationError, POLICY_ERROR_MESSAGE } from "./errors.js";
export {
  verifyBundleSignature,
  signBundleFiles,
  parseVerificationKey,
  bundleFileHashes,
  canonicalJson,
  DEFAULT_SIGNING_ALG,
  SIGNING_ALGS,
} from "./bundle-signature.js";
export type { VerificationKey } from "./bundle-signature.js";
export { normalisePath, MAX_PATH_BYTES } from "./normalise-path.js";
export type { PathResult } from "./normalise-path.js";
export { tokenFacts } from "./token-facts.js";
export { engineDeny, errorDeny } from "./deny.js";
export { inputProblem } from "./validate-input.js";
export type * from "./types.js";
