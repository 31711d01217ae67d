/**
 * Stages 2 to 4 of a decision, shared by every way a caller is named (a verified token in decide.ts, a subject
 * named by an authenticated AuthZEN PEP in authzen/evaluate.ts): the subject's roles, the policy input and the
 * evaluation, all on one read of the live bundle.
 */
import { engineDeny, SPEC_TOKEN_SHAPE } from "../../engine/index.js";
import type { Decision, DecisionInput } from "../../engine/types.js";
import type { Directory } from "../../directory/index.js";
import { NO_ROLE_NAMES, type EntryRoles } from "../../directory/role-resolver.js";
import type { PolicyHolder } from "../policy.js";
import { decisionInput } from "./input.js";
import type { DecisionRun } from "./run.js";
import { findSubject } from "./subject.js";

/** Where the subject's roles and the policy come from. */
export interface SubjectSources {
  policy: Pick<PolicyHolder, "current">;
  directory: Pick<Directory, "lookup"> | undefined;
  rolesClaim: string | undefined;
}

/** No bundle loaded: no entry resolves (the decision is denied policy_unavailable anyway). */
const NO_ENTRY_ROLES: EntryRoles = () => undefined;

/**
 * The decision for `claims` (a token's, or claims named as the live bundle's TokenShape names them) calling `method` on
 * the run's path; `extra` joins the policy input (AuthZEN's request).
 * Sets the run's subject, input and the revision that decided.
 */
export function evaluateSubject(
  run: DecisionRun,
  claims: Record<string, unknown>,
  method: string,
  sources: SubjectSources,
  extra?: Partial<DecisionInput>,
): Decision {
  // One read of the live bundle: the engine that evaluates and the names that resolve the roles are one snapshot's.
  const snapshot = sources.policy.current;
  const shape = snapshot?.engine.tokenShape ?? SPEC_TOKEN_SHAPE;
  // 2. subject
  const caller = findSubject(claims, {
    shape,
    rolesClaim: sources.rolesClaim,
    directory: sources.directory,
    resolveRole: snapshot?.resolveRole ?? NO_ROLE_NAMES,
    rolesOf: snapshot?.rolesOf ?? NO_ENTRY_ROLES,
  });
  run.subject = caller.subject;
  // 3. input, 4. evaluate
  const engine = snapshot?.engine;
  if (!run.normalised.ok) return engineDeny("path_invalid", run.normalised.message, run.mode, 403);
  if (!engine) return engineDeny("policy_unavailable", "no policy is loaded", run.mode, 403);
  const input = decisionInput(method, run.normalised.path, claims, caller, run.mode, shape);
  run.input = extra ? { ...input, ...extra } : input;
  // The revision that decided (a reload may swap the engine while a decision runs).
  run.revision = engine.revision;
  // Encoded once, for the engine and the decision line (the record carries it beside the input it encodes).
  run.inputText = JSON.stringify(run.input);
  const evaluating = run.span?.step("portier.evaluate");
  try {
    return engine.decide(run.input, run.inputText);
  } finally {
    evaluating?.end();
  }
}
