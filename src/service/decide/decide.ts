/**
 * The one decision function every adapter calls (HTTP: src/service/http/; gRPC: src/service/grpc/), read from
 * top to bottom as opa-envoy-plugin's check(): from the request to the recorded answer, each stage a function
 * that takes values and returns one, and one `stop` that every path ends in.
 *
 *   | stage           | module                    | gives                                   | on failure            |
 *   |-----------------|---------------------------|-----------------------------------------|-----------------------|
 *   | (start)         | decide.ts `decide`        | clock, decision_id, normalised path     |                       |
 *   | 1. authenticate | authenticate.ts           | claims or a refusal (now, or a promise) | 401 <TokenError code> |
 *   | 2. subject      | subject.ts findSubject    | Caller: directory or roles claim        | roles [], not synced  |
 *   | 3. input        | input.ts decisionInput    | DecisionInput (a valid path, a policy)  | 403 path_invalid,     |
 *   |                 |                           |                                         | policy_unavailable    |
 *   | 4. evaluate     | src/engine, decide()      | Decision, in the calling thread         | the engine's denies   |
 *   | 5. answer       | answer.ts shapeAnswer     | DecisionAnswer, failing closed          | 403 internal_error    |
 *   | (stop)          | run.ts recorder           | metrics, the decision log line          | never logs the token  |
 *
 * Only the token check may be pending (a token not verified before): `decide` is the one place that turns it
 * into a promise; from there on everything is synchronous (the engine answers in the calling thread), so a
 * cached token gets its answer returned directly. Adapters hand the answer on with `whenAnswered`, which sends
 * now or later. Never throws: any unexpected error becomes a deny (fail closed), logged as decision_error.
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import { messageOf } from "../../errors/caught.js";
import { engineDeny, normalisePath } from "../../engine/index.js";
import type { Decision, RoleCheckMode } from "../../engine/types.js";
import type { AccessTokenVerifier } from "../../auth/index.js";
import type { Directory } from "../../directory/index.js";
import { NO_ROLE_NAMES, type EntryRoles } from "../../directory/role-resolver.js";
import type { PolicyHolder } from "../policy.js";
import type { ServiceMetrics } from "../metrics.js";
import type { DecisionTracer } from "../tracing/decision-tracer.js";
import { authenticate, type Authenticated } from "./authenticate.js";
import { findSubject } from "./subject.js";
import { decisionInput } from "./input.js";
import { shapeAnswer } from "./answer.js";
import { createRecorder, type DecisionRun } from "./run.js";
import type { Decide, DecisionAnswer, MaybePromise } from "./types.js";

export type { Decide, DecisionAnswer, DecisionRequest, MaybePromise, RequestTrace } from "./types.js";

export interface DecideContext {
  verifier: AccessTokenVerifier;
  policy: Pick<PolicyHolder, "current" | "engine">;
  directory: Pick<Directory, "lookup"> | undefined;
  rolesClaim: string | undefined;
  roleCheck: RoleCheckMode;
  logger: Logger;
  metrics: ServiceMetrics | undefined;
  /** With tracing on: one span per decision, ended by the recorder. */
  tracer?: DecisionTracer | undefined;
}

/** No bundle loaded: no entry resolves (the decision is denied policy_unavailable anyway). */
const NO_ENTRY_ROLES: EntryRoles = () => undefined;

export function createDecide(ctx: DecideContext): Decide {
  const record = createRecorder(ctx.logger, ctx.metrics, () => ctx.policy.engine?.revision);

  return function decide(req, adapter) {
    // Start: the clock, the decision id, the path normalised up front (so that the log names the path even when
    // the token fails; refused after the token, below).
    const run: DecisionRun = {
      started: process.hrtime.bigint(),
      decision_id: randomUUID(),
      req,
      adapter,
      mode: ctx.roleCheck,
      normalised: normalisePath(req.path),
      subject: null,
      input: undefined,
      revision: undefined,
      www: undefined,
      detail: undefined,
      span: undefined,
      trace: undefined,
    };
    if (ctx.tracer) {
      run.span = ctx.tracer.start(adapter, req.trace?.headers);
      run.trace = run.span.trace;
    }
    // 1. authenticate: a token verified before answers now; any other is this decision's one promise.
    let auth: MaybePromise<Authenticated>;
    const verifying = run.span?.step("portier.verify_token");
    try {
      auth = authenticate(req, ctx.verifier, run.mode);
    } catch (err) {
      verifying?.end();
      return stop(run, failed(run, err));
    }
    if (auth instanceof Promise)
      return auth.then(
        (a) => {
          verifying?.end();
          return decideAuthenticated(run, a);
        },
        (err: unknown) => {
          verifying?.end();
          return stop(run, failed(run, err));
        },
      );
    verifying?.end();
    return decideAuthenticated(run, auth);
  };

  /** Stages 2 to 4 for a checked token, synchronously, then the stop. */
  function decideAuthenticated(run: DecisionRun, auth: Authenticated): DecisionAnswer {
    let decision: Decision | undefined;
    try {
      if (!auth.ok) {
        run.www = auth.www;
        decision = auth.deny;
      } else if (auth.claims) {
        // One read of the live bundle: the engine that evaluates and the names that resolve the roles are one
        // snapshot's.
        const snapshot = ctx.policy.current;
        // 2. subject
        const caller = findSubject(auth.claims, {
          rolesClaim: ctx.rolesClaim,
          directory: ctx.directory,
          resolveRole: snapshot?.resolveRole ?? NO_ROLE_NAMES,
          rolesOf: snapshot?.rolesOf ?? NO_ENTRY_ROLES,
        });
        run.subject = caller.subject;
        // 3. input, 4. evaluate
        const engine = snapshot?.engine;
        if (!run.normalised.ok) decision = engineDeny("path_invalid", run.normalised.message, run.mode, 403);
        else if (!engine) decision = engineDeny("policy_unavailable", "no policy is loaded", run.mode, 403);
        else {
          run.input = decisionInput(run.req.method, run.normalised.path, auth.claims, caller, run.mode);
          // The revision that decided (a reload may swap the engine while a decision runs).
          run.revision = engine.revision;
          const evaluating = run.span?.step("portier.evaluate");
          try {
            decision = engine.decide(run.input);
          } finally {
            evaluating?.end();
          }
        }
      }
    } catch (err) {
      decision = failed(run, err);
    }
    return stop(run, decision);
  }

  /** 5. answer, and the record: where every decision ends. */
  function stop(run: DecisionRun, decision: Decision | undefined): DecisionAnswer {
    run.detail = decision?.detail;
    return record(run, shapeAnswer(decision, run.decision_id, run.subject, run.www, run.mode));
  }

  /** An unexpected error: logged (decision_error), denied internal_error. */
  function failed(run: DecisionRun, err: unknown): Decision {
    ctx.logger.error(
      { event: "decision_error", decision_id: run.decision_id, error: messageOf(err) },
      "decision failed; denied",
    );
    return engineDeny("internal_error", "the decision could not be made", run.mode, 403);
  }
}

/**
 * Hands a decision's answer to `send`: now when it was made at once (a token verified before), else when its
 * promise settles; the returned promise (only then) rejects when `send` throws or the decision failed. The one
 * junction every adapter uses. `to` is passed apart from `send` so that an answer made at once costs no closure.
 */
export function whenAnswered<T>(
  answer: MaybePromise<DecisionAnswer>,
  send: (to: T, answer: DecisionAnswer) => void,
  to: T,
): Promise<void> | undefined {
  if (answer instanceof Promise) return answer.then((a) => send(to, a));
  send(to, answer);
  return undefined;
}
