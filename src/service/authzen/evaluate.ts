/**
 * One AuthZEN evaluation as a Portier decision, the mapping written down in docs/authzen.md:
 *   - subject {type: "user" | "identity", id}: a directory record's `sub`; its roles from the directory as for a
 *     token (findSubject). The policy input has no token: input.token holds the record's sub and tenant_id, and
 *     input.authzen the request itself, by which the policy knows a PEP named the user (token.named_by_pep). An
 *     unknown subject has no roles and is not synced: denied like a token whose sub has no record.
 *   - action.name: the HTTP method (upper-cased, as /decide does).
 *   - resource {type: "route", id}: a route template exactly as the catalog writes it, or a concrete path judged
 *     by /decide's path rules (normalisePath: dot segments, encodings...).
 *   - context and properties: passed to the policy (input.authzen).
 * The decision carries /decide's reason code and sentence in its context; a request that cannot be asked (another
 * subject or resource type, an action that is not a method) is a deny with context.error. Every evaluation is
 * recorded (record-decision.ts) with its decision id. Synchronous: no token to verify.
 */
import { engineDeny, normalisePath, SPEC_TOKEN_SHAPE, type PathResult } from "../../engine/index.js";
import type { Decision, DecisionInput, RoleCheckMode } from "../../engine/types.js";
import type { Directory } from "../../directory/index.js";
import type { PolicyHolder } from "../policy.js";
import type { DecisionTracer } from "../tracing/decision-tracer.js";
import { shapeAnswer } from "../decide/answer.js";
import { evaluateSubject } from "../decide/evaluate-subject.js";
import { startRun, type Recorder, type DecisionRun } from "../decide/run.js";
import type { RequestTrace } from "../decide/types.js";
import type { AuthzenDecision, EvaluationRequest } from "./types.js";

export interface EvaluatorDeps {
  policy: Pick<PolicyHolder, "current">;
  directory: Pick<Directory, "lookup"> | undefined;
  roleCheck: RoleCheckMode;
  record: Recorder;
  tracer?: DecisionTracer | undefined;
}

/** The subject types that name a directory record. */
const SUBJECT_TYPES = ["user", "identity"];
const METHOD = /^[A-Za-z]{1,16}$/;

export type Evaluate = (req: EvaluationRequest, endpoint: string, trace?: RequestTrace) => AuthzenDecision;

/** Why a request cannot be asked at all (a deny with context.error), or undefined. */
function unaskable(req: EvaluationRequest): string | undefined {
  if (!SUBJECT_TYPES.includes(req.subject.type))
    return `subject.type ${JSON.stringify(req.subject.type)}: Portier knows subjects of type "user" or "identity"`;
  if (req.resource.type !== "route")
    return `resource.type ${JSON.stringify(req.resource.type)}: Portier knows resources of type "route"`;
  if (!METHOD.test(req.action.name))
    return `action.name ${JSON.stringify(req.action.name.slice(0, 64))}: must be an HTTP method (GET, POST, ...)`;
  return undefined;
}

export function createEvaluator(deps: EvaluatorDeps): Evaluate {
  /** The subject's record, the policy input and the policy's decision, for a request that can be asked. */
  function decide(req: EvaluationRequest, run: DecisionRun): Decision {
    // The record stands in for a token: its sub and tenant are the claims the subject's roles are found with, named
    // as the live bundle's project names them (evaluateSubject reads the same snapshot: nothing swaps it meanwhile).
    // Looked up once: findSubject is handed this record for this sub rather than looking it up again.
    const sub = req.subject.id;
    const record = deps.directory?.lookup(sub);
    const names = deps.policy.current?.engine.tokenShape ?? SPEC_TOKEN_SHAPE;
    const named: [string, string][] = [[names.subjectClaim, sub]];
    if (record && names.tenantClaim !== null) named.push([names.tenantClaim, record.tenant_id]);
    const claims = Object.fromEntries(named);
    const directory = record ? { lookup: (s: string) => (s === sub ? record : undefined) } : undefined;
    const sources = { policy: deps.policy, directory, rolesClaim: undefined };
    return evaluateSubject(run, claims, req.action.name, sources, { authzen: authzenInput(req) });
  }

  return function evaluate(req, endpoint, trace) {
    const templates = deps.policy.current?.engine.templates ?? [];
    const problem = unaskable(req);
    // A template of the catalog is judged as written; anything else is a path, under /decide's rules.
    const normalised: PathResult = templates.includes(req.resource.id)
      ? { ok: true, path: req.resource.id }
      : normalisePath(req.resource.id);
    const asked = { method: req.action.name, path: req.resource.id, token: undefined, ...(trace ? { trace } : {}) };
    const run = startRun(asked, endpoint, deps.roleCheck, normalised, deps.tracer);
    let decision: Decision;
    try {
      decision = problem === undefined ? decide(req, run) : engineDeny("request_invalid", problem, run.mode, 403);
    } catch {
      // Fail closed: an unexpected error is a deny, marked as Portier's failure.
      run.failed = true;
      decision = engineDeny("internal_error", "the decision could not be made", run.mode, 403);
    }
    run.detail = decision.detail;
    const answer = deps.record(run, shapeAnswer(decision, run));
    return {
      decision: answer.allow,
      context: {
        decision_id: answer.decision_id,
        reason: answer.reason,
        message: answer.message,
        ...(problem !== undefined ? { error: { status: 400, message: problem } } : {}),
      },
    };
  };
}

/** The request as the policy reads it: the four parts, with only the members the information model defines. */
function authzenInput(req: EvaluationRequest): NonNullable<DecisionInput["authzen"]> {
  const entity = (e: EvaluationRequest["subject"]) => ({
    type: e.type,
    id: e.id,
    ...(e.properties !== undefined ? { properties: e.properties } : {}),
  });
  return {
    subject: entity(req.subject),
    action: {
      name: req.action.name.toUpperCase(),
      ...(req.action.properties !== undefined ? { properties: req.action.properties } : {}),
    },
    resource: entity(req.resource),
    ...(req.context !== undefined ? { context: req.context } : {}),
  };
}
