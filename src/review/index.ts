/**
 * Review tools for security staff: the access matrix, grant diffs and single-decision explanations,
 * all computed by evaluating the compiled policy.
 */
export { computeMatrix, samplePath, probeUniverse, readCatalog } from "./compute-matrix.js";
export type { AccessMatrix } from "./compute-matrix.js";
export { renderMatrix, MATRIX_FORMATS } from "./render-matrix.js";
export { diffMatrices, hasChanges, renderDiff, renderDiffMarkdown } from "./diff-matrices.js";
export { loadPolicySource } from "./load-policy-source.js";
export { review } from "./review.js";
export { failedReport } from "./review-failure.js";
export { FAIL_ON } from "./review-report.js";
export type { ReviewReport } from "./review-report.js";
export { renderReviewMarkdown } from "./review-markdown.js";
export { renderReviewSarif } from "./review-sarif.js";
export { renderReviewJunit } from "./review-junit.js";
export { renderAnnotations } from "./review-annotations.js";
export { explain, explainRequest, explainDecisionInput, describeCaller, renderExplanation } from "./explain.js";
export type { ExplainRequest } from "./explain.js";
export { StaleBundleError, refuseStaleBundle } from "./stale-bundle.js";
export { replayLines, replayLogFile, renderReplay, renderReplayMarkdown, evidenceProblem } from "./replay.js";
export { shadowLogFile, shadowLines, renderShadow, renderShadowMarkdown } from "./shadow-report.js";
