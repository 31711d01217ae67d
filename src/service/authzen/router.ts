/**
 * The AuthZEN Authorization API 1.0 on the decision port, when configured: the POSTs answered on plain node:http
 * before Express (http/listener.ts calls answerPost), the rest an Express router the app mounts:
 *
 *   | request                                        | answer                                     |
 *   |------------------------------------------------|--------------------------------------------|
 *   | POST /access/v1/evaluation                     | {decision, context} (evaluate.ts)          |
 *   | POST /access/v1/evaluations                    | {evaluations: [...]} (evaluate-batch.ts)   |
 *   | POST /access/v1/search/{subject,resource,action} | {page, results} (search.ts)              |
 *   | GET /.well-known/authzen-configuration[/path]  | PDP metadata (discovery.ts)                |
 *
 * Transport per the spec's HTTPS binding: X-Request-ID echoed on every answer; the PEP authenticated first
 * (pep-credential.ts: 401 with WWW-Authenticate, and no decision); the body read under /decide's bounds (size,
 * time, JSON content type) and validated (400 with a message naming the field: never a 500, never a decision);
 * a decision is 200 whatever it says. Everything unexpected is a 500 without a decision.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import express from "express";
import type { Logger } from "pino";
import { messageOf } from "../../errors/caught.js";
import { withTrace } from "../http/gateway-headers.js";
import { readBody, type BodyLimits } from "../http/read-body.js";
import { sendJson } from "../http/write-answer.js";
import type { RequestTrace } from "../decide/types.js";
import { pdpMetadata, ENDPOINTS } from "./discovery.js";
import { evaluateBatch, mergeDefaults } from "./evaluate-batch.js";
import type { Evaluate } from "./evaluate.js";
import { parseEvaluation, parseEvaluations, parseSearch, type Parsed, type SearchKind } from "./parse-body.js";
import { checkPep, pepChallenge, type PepCredentials } from "./pep-credential.js";
import { search, type SearchDeps } from "./search.js";

export interface AuthzenLimits {
  body: BodyLimits;
  /** Most items of one /access/v1/evaluations request. */
  maxBatch: number;
  /** Most results of one search page (and its default). */
  maxPage: number;
  /** Most candidates one search request evaluates. */
  searchBudget: number;
}

export interface AuthzenRouterDeps {
  evaluate: Evaluate;
  credentials: PepCredentials;
  directory: SearchDeps["directory"];
  templates: SearchDeps["templates"];
  logger: Logger;
  /** --authzen-pdp-id: the discovery document is served only with it. */
  pdpId?: string | undefined;
  limits: AuthzenLimits;
}

type Handler = (body: unknown, trace: RequestTrace | undefined) => Parsed<unknown>;

/**
 * The AuthZEN endpoints: `answerPost` answers a POST to one of them (undefined for any other path; its promise
 * never rejects), `router` the discovery document and the 405 of other methods.
 */
export interface AuthzenEndpoints {
  router: express.Router;
  answerPost: (req: IncomingMessage, res: ServerResponse, endpoint: string) => Promise<void> | undefined;
}

export function createAuthzenRouter(deps: AuthzenRouterDeps): AuthzenEndpoints {
  const router = express.Router();
  const { limits } = deps;
  const searchDeps: SearchDeps = {
    evaluate: deps.evaluate,
    directory: deps.directory,
    templates: deps.templates,
    maxPage: limits.maxPage,
    budget: limits.searchBudget,
  };

  const evaluation: Handler = (body, trace) => {
    const parsed = parseEvaluation(body);
    return parsed.ok ? { ok: true, value: deps.evaluate(parsed.value, "authzen_evaluation", trace) } : parsed;
  };
  const evaluations: Handler = (body, trace) => {
    const parsed = parseEvaluations(body);
    if (!parsed.ok) return parsed;
    const items = parsed.value.evaluations ?? [];
    // No items: the request is one evaluation (the spec's backwards-compatible form), answered as one.
    if (items.length === 0) return evaluation(body, trace);
    if (items.length > limits.maxBatch)
      return {
        ok: false,
        error: `body.evaluations: ${items.length} items, more than ${limits.maxBatch} (--authzen-max-batch)`,
      };
    const merged = mergeDefaults(parsed.value);
    if (!merged.ok) return merged;
    const semantic = parsed.value.options?.evaluations_semantic;
    const answers = evaluateBatch(merged.items, semantic, (item) => deps.evaluate(item, "authzen_evaluations", trace));
    return { ok: true, value: { evaluations: answers } };
  };
  const searchOf =
    (kind: SearchKind): Handler =>
    (body, trace) => {
      const parsed = parseSearch(kind, body);
      return parsed.ok ? search(kind, parsed.value, searchDeps, trace) : parsed;
    };

  const handlers: Record<string, Handler> = {
    [ENDPOINTS.access_evaluation_endpoint]: evaluation,
    [ENDPOINTS.access_evaluations_endpoint]: evaluations,
    [ENDPOINTS.search_subject_endpoint]: searchOf("subject"),
    [ENDPOINTS.search_resource_endpoint]: searchOf("resource"),
    [ENDPOINTS.search_action_endpoint]: searchOf("action"),
  };
  // POSTs are answered before Express, on plain node:http like /decide (answerPost, called by http/listener.ts):
  // Express's dispatch cost about a quarter of an evaluation's CPU. Other methods on these paths get a 405 here.
  for (const path of Object.keys(handlers)) {
    router.all(path, (req, res) => {
      sendJson(res, 405, { error: "method_not_allowed", message: `use POST ${path}` }, ["allow", "POST", ...echo(req)]);
    });
  }
  const answerPost = (req: IncomingMessage, res: ServerResponse, endpoint: string): Promise<void> | undefined => {
    const handler = Object.hasOwn(handlers, endpoint) ? handlers[endpoint] : undefined;
    if (handler === undefined) return undefined;
    return answer(req, res, handler, deps).catch((err: unknown) => {
      deps.logger.error({ event: "authzen_error", error: messageOf(err) }, "AuthZEN request failed; no decision");
      try {
        if (!res.headersSent)
          sendJson(res, 500, { error: "internal_error", message: "the request could not be handled" }, echo(req));
        else res.destroy();
      } catch {
        res.destroy();
      }
    });
  };

  if (deps.pdpId !== undefined) {
    const { path, document } = pdpMetadata(deps.pdpId);
    router.get(path, (req, res) => {
      sendJson(res, 200, document, ["cache-control", "max-age=300", ...echo(req)]);
    });
  }
  return { router, answerPost };
}

/** What node:http may write back as a header value (what it accepts in a request, too). */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]{1,1024}$/;

/** The X-Request-ID to answer with: the PEP's, as sent (one that could not be written back is left out). */
function echo(req: IncomingMessage): string[] {
  const id = req.headers["x-request-id"];
  return typeof id === "string" && HEADER_VALUE.test(id) ? ["x-request-id", id] : [];
}

async function answer(
  req: IncomingMessage,
  res: ServerResponse,
  handler: Handler,
  deps: AuthzenRouterDeps,
): Promise<void> {
  const pep = await checkPep(req, deps.credentials);
  // A refusal before the body is read: the connection cannot carry another request, so it closes.
  if (!pep.ok) {
    const headers = [...echo(req), "connection", "close"];
    if (pep.status === 401) headers.push("www-authenticate", pepChallenge(pep));
    return sendJson(res, pep.status, { error: pep.error, message: pep.message }, headers);
  }
  const raw = await readBody(req, deps.limits.body);
  if (!raw.ok)
    return sendJson(res, raw.status, { error: raw.error, message: raw.message }, [...echo(req), "connection", "close"]);
  let body: unknown;
  try {
    body = JSON.parse(raw.body.toString("utf8"));
  } catch (err) {
    return sendJson(res, 400, { error: "invalid_json", message: `body: ${messageOf(err)}` }, echo(req));
  }
  const trace = withTrace({ method: "", path: "", token: undefined }, req).trace;
  const result = handler(body, trace);
  if (!result.ok) return sendJson(res, 400, { error: "invalid_request", message: result.error }, echo(req));
  sendJson(res, 200, result.value, [...echo(req), "cache-control", "no-store"]);
}
