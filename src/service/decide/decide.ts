/**
 * The one decision function every adapter calls (HTTP: src/service/http/; gRPC: src/service/grpc/), read from
 * top to bottom as opa-envoy-plugin's check(): from the request to the recorded answer, each stage a function
 * that takes values and returns one, and one `stop` that every path ends in.
 *
 *   | stage           | module                    | gives                                   | on failure            |
 *   |-----------------|---------------------------|-----------------------------------------|-----------------------|
 *   | (start)         | decide.ts `decide`        | clock, decision_id, normalised path     |                       |
 *   | 1. authenticate | authenticate.ts           | claims or a refusal                     | 401 <TokenError code> |
 *   | 2. subject      | subject.ts findSubject    | Caller: directory or roles claim        | roles [], not synced  |
 *   | 3. input        | input.ts decisionInput    | DecisionInput (a valid path, a policy)  | 403 path_invalid,     |
 *   |                 |                           |                                         | policy_unavailable    |
 *   | 4. evaluate     | src/engine, decide()      | Decision, in the calling thread         | the engine's denies   |
 *   | 5. answer       | answer.ts shapeAnswer     | DecisionAnswer, failing closed          | 403 internal_error    |
 *   | (stop)          | run.ts recorder           | metrics, the decision log line          | never logs the token  |
 *
 * Only the token check awaits (src/auth answers a token it verified before from its cache); the engine answers in
 * the calling thread. Never rejects: any unexpected error becomes a deny (fail closed, `failed` set), logged as
 * decision_error.
 */
import type { Logger } from "pino";
import { messageOf } from "../../errors/caught.js";
import { engineDeny, normalisePath } from "../../engine/index.js";
import type { Decision, RoleCheckMode } from "../../engine/types.js";
import type { Directory } from "../../directory/index.js";
import type { PolicyHolder } from "../policy.js";
import type { ServiceMetrics } from "../metrics.js";
import type { Shadow } from "../shadow/shadow.js";
import type { DecisionTracer } from "../tracing/decision-tracer.js";
import { authenticate, type Authenticated, type TokenVerifier } from "./authenticate.js";
import { evaluateSubject } from "./evaluate-subject.js";
import { shapeAnswer } from "./answer.js";
import { decisionLine } from "../decision-logs/line.js";
import type { DecisionRecordSink } from "./record.js";
import { createRecorder, createRejecter, startRun, type DecisionRun } from "./run.js";
import type { Decide, DecisionAnswer, DecisionRequest } from "./types.js";

export type { Decide, DecisionAnswer, DecisionRequest } from "./types.js";

export interface DecideContext {
  verifier: TokenVerifier;
  policy: Pick<PolicyHolder, "current" | "engine">;
  directory: Pick<Directory, "lookup"> | undefined;
  rolesClaim: string | undefined;
  roleCheck: RoleCheckMode;
  logger: Logger;
  metrics: ServiceMetrics | undefined;
  /** A candidate policy evaluated after each answer, on its input (--shadow-bundle); the recorder offers it. */
  shadow?: Pick<Shadow, "take"> | undefined;
  /** With tracing on: one span per decision, ended by the recorder. */
  tracer?: DecisionTracer | undefined;
  /** Where each decision's record goes (default: its line, through the logger, at once). */
  decisionLog?: DecisionRecordSink;
}

export function createDecide(ctx: DecideContext): Decide {
  const sink = ctx.decisionLog ?? { record: (r) => ctx.logger.info(decisionLine(r), "decision") };
  const revision = () => ctx.policy.engine?.revision;
  const record = createRecorder(ctx.metrics, revision, sink, ctx.shadow);
  const reject = createRejecter(ctx.metrics, revision, sink);

  return Object.assign(
    async function decide(req: DecisionRequest, adapter: string): Promise<DecisionAnswer> {
      // Start: the clock, the decision id, the path normalised up front (so that the log names the path even when
      // the token fails; refused after the token, below).
      const run = startRun(req, adapter, ctx.roleCheck, normalisePath(req.path), ctx.tracer);
      let decision: Decision;
      try {
        // 1. authenticate
        const verifying = run.span?.step("portier.verify_token");
        let auth: Authenticated;
        try {
          auth = await authenticate(req, ctx.verifier, run.mode);
        } finally {
          verifying?.end();
        }
        if (auth.ok) decision = decideFor(run, auth.claims);
        else {
          run.www = auth.www;
          decision = auth.deny;
        }
      } catch (err) {
        decision = failed(run, err);
      }
      return stop(run, decision);
    },
    { reject },
  );

  /** Stages 2 to 4 for a verified token. */
  function decideFor(run: DecisionRun, claims: Record<string, unknown>): Decision {
    return evaluateSubject(run, claims, run.req.method, ctx);
  }

  /** 5. answer, and the record: where every decision ends. */
  function stop(run: DecisionRun, decision: Decision): DecisionAnswer {
    run.detail = decision.detail;
    return record(run, shapeAnswer(decision, run));
  }

  /** An unexpected error: logged (decision_error), denied internal_error. */
  function failed(run: DecisionRun, err: unknown): Decision {
    run.failed = true;
    ctx.logger.error(
      { event: "decision_error", decision_id: run.decision_id, error: messageOf(err) },
      "decision failed; denied",
    );
    return engineDeny("internal_error", "the decision could not be made", run.mode, 403);
  }
}
