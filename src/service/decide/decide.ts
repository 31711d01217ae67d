/**
 * The one decision function every adapter calls: a pipeline of four stages (src/service/decide/), each
 * adding to the decision's run, and one place where every path ends.
 *
 *   | stage         | module                   | what                                      | on failure                                       |
 *   |---------------|--------------------------|-------------------------------------------|--------------------------------------------------|
 *   | (start)       | decide/run.ts startRun   | clock, decision_id, path normalised       |                                                  |
 *   | authenticate  | decide/authenticate.ts   | bearer token, verified (cached: no await) | 401 token_missing, 401 <TokenError code>         |
 *   | subject       | decide/subject.ts        | directory lookup or roles claim, tenant   | roles [] / synced false (the policy decides)     |
 *   | evaluate      | decide/evaluate.ts       | path check, DecisionInput, engine         | 403 path_invalid, 403 policy_unavailable         |
 *   | answer        | decide/answer.ts         | fail-closed guard, decision_id, subject   | 403 internal_error when nothing decided          |
 *   | (record)      | decide/run.ts recorder   | metrics, decision log line, every path    | never the token or Authorization header          |
 *
 * Never throws: any unexpected error becomes a deny (fail closed), logged as decision_error. With a cached
 * token and an in-process engine the answer is returned directly, not as a promise.
 */
import type { Logger } from "pino";
import { messageOf } from "../../errors/caught.js";
import { engineDeny } from "../../engine/index.js";
import type { Decision, RoleCheckMode } from "../../engine/types.js";
import type { AccessTokenVerifier } from "../../auth/index.js";
import type { Directory } from "../../directory/index.js";
import { NO_ROLE_NAMES, type EntryRoles } from "../../directory/role-resolver.js";
import type { PolicyHolder } from "../policy.js";
import type { ServiceMetrics } from "../metrics.js";
import { authenticate, type Authenticated } from "./authenticate.js";
import { findSubject } from "./subject.js";
import { evaluate } from "./evaluate.js";
import { shapeAnswer } from "./answer.js";
import { createRecorder, startRun, type DecisionRun } from "./run.js";
import type { Decide, DecisionAnswer, MaybePromise } from "./types.js";

export type { Decide, DecisionAnswer, DecisionRequest, MaybePromise, RequestTrace, Subject } from "./types.js";

export interface DecideContext {
  verifier: AccessTokenVerifier;
  policy: Pick<PolicyHolder, "current" | "engine">;
  directory: Pick<Directory, "lookup"> | undefined;
  rolesClaim: string | undefined;
  roleCheck: RoleCheckMode;
  logger: Logger;
  metrics: ServiceMetrics | undefined;
}

/** No bundle loaded: no entry resolves (the decision is denied policy_unavailable anyway). */
const NO_ENTRY_ROLES: EntryRoles = () => undefined;

export function createDecide(ctx: DecideContext): Decide {
  const record = createRecorder(ctx.logger, ctx.metrics, () => ctx.policy.engine?.revision);

  const failed = (run: DecisionRun, err: unknown): Decision => {
    ctx.logger.error(
      { event: "decision_error", decision_id: run.decision_id, error: messageOf(err) },
      "decision failed; denied",
    );
    return engineDeny("internal_error", "the decision could not be made", run.mode, 403);
  };
  const finish = (run: DecisionRun, decision: Decision | undefined): DecisionAnswer =>
    record(run, shapeAnswer(run, decision));
  const settle = (run: DecisionRun, decision: MaybePromise<Decision | undefined>): MaybePromise<DecisionAnswer> =>
    decision instanceof Promise
      ? decision.then(
          (d) => finish(run, d),
          (err: unknown) => finish(run, failed(run, err)),
        )
      : finish(run, decision);

  /** Stages 2 and 3 for an authenticated (or refused) request. */
  const decideFor = (run: DecisionRun, auth: Authenticated): MaybePromise<Decision | undefined> => {
    if (!auth.ok) {
      run.www = auth.www;
      return auth.deny;
    }
    if (!auth.claims) return undefined;
    // One read of the live bundle: the engine that evaluates and the names that resolve the roles are one snapshot's.
    const snapshot = ctx.policy.current;
    const caller = findSubject(auth.claims, {
      rolesClaim: ctx.rolesClaim,
      directory: ctx.directory,
      resolveRole: snapshot?.resolveRole ?? NO_ROLE_NAMES,
      rolesOf: snapshot?.rolesOf ?? NO_ENTRY_ROLES,
    });
    run.subject = caller.subject;
    return evaluate(run, auth.claims, caller, snapshot?.engine);
  };

  return function decide(req, adapter) {
    const run = startRun(req, adapter, ctx.roleCheck);
    let decision: MaybePromise<Decision | undefined>;
    try {
      const auth = authenticate(req, ctx.verifier, run.mode);
      decision = auth instanceof Promise ? auth.then((a) => decideFor(run, a)) : decideFor(run, auth);
    } catch (err) {
      decision = failed(run, err);
    }
    return settle(run, decision);
  };
}
