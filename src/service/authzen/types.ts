/**
 * The AuthZEN Authorization API 1.0 shapes Portier reads and answers (https://openid.net/specs/authorization-api-1_0):
 * the evaluation request (subject, action, resource, context), its decision, and a search's answer.
 */
import type { AuthzenInput } from "../../engine/types.js";

/** One evaluation, defaults merged: what the policy sees as input.authzen. */
export type EvaluationRequest = AuthzenInput;

/** What the decision's `context` carries: the decision id, and the reason code and sentence /decide gives. */
export interface DecisionContext {
  decision_id: string;
  reason: string;
  message: string;
  /** An evaluation that could not be asked (an unsupported subject or resource type...): decision false. */
  error?: { status: number; message: string };
}

export interface AuthzenDecision {
  decision: boolean;
  context: DecisionContext;
}

/** The page object of a search answer: `next_token` "" on the last page. */
export interface SearchPage {
  next_token: string;
  count: number;
}

export interface SearchAnswer<R> {
  page: SearchPage;
  results: R[];
}
