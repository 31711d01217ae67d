/**
 * Review tools for security staff: the access matrix, grant diffs and single-decision explanations,
 * all computed by evaluating the compiled policy.
 */
export { computeMatrix, samplePath, PROBE_COLUMNS } from "./compute-matrix.js";
export type { AccessMatrix, MatrixCell, MatrixRole, MatrixRoute } from "./compute-matrix.js";
export { renderMatrix, allowedRolesText, MATRIX_FORMATS } from "./render-matrix.js";
export type { MatrixFormat } from "./render-matrix.js";
export { diffMatrices, renderDiff } from "./diff-matrices.js";
export type { MatrixDiff, GrantChange } from "./diff-matrices.js";
export { loadPolicySource } from "./load-policy-source.js";
export { explain, explainInput, renderExplanation } from "./explain.js";
export type { ExplainRequest } from "./explain.js";
