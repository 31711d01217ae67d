/**
 * POST /decide, the sidecar's endpoint: a JSON body (read-body.ts bounds it; decide-body.ts validates it), one
 * decision or a batch of them, answered as JSON. A body refused (400, 408, 413, 415) is recorded under a decision
 * id as every decision is. The caller is the sidecar, so no request trace is recorded from
 * gateway headers.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { messageOf } from "../../errors/caught.js";
import type { Decide, DecisionAnswer, DecisionRequest } from "../decide/decide.js";
import { parseDecideBody, type DecideBody } from "./decide-body.js";
import { credentials } from "../gateway/credentials.js";
import { withTrace } from "./gateway-headers.js";
import { readBody, type BodyLimits } from "./read-body.js";
import { sendJson } from "./write-answer.js";

/**
 * `token` as given, else the `headers`' Authorization value read as a gateway's is (gateway-headers.ts
 * credentials: one Bearer credential, no folded second one); decide-body.ts has refused two spellings of it.
 */
function fromBody(body: DecideBody): DecisionRequest {
  if (body.token !== undefined) return { method: body.method, path: body.path, token: body.token || undefined };
  const auth = Object.entries(body.headers ?? {}).find(([name]) => name.toLowerCase() === "authorization");
  return { method: body.method, path: body.path, ...credentials(auth && [auth[1]]) };
}

/** The answer as /decide sends it: without the 401 header value and the adapters' failure flag. */
function publicAnswer(a: DecisionAnswer): Omit<DecisionAnswer, "www_authenticate" | "failed" | "failure"> {
  const { www_authenticate: _header, failed: _failed, failure: _failure, ...rest } = a;
  return rest;
}

export async function answerDecide(
  req: IncomingMessage,
  res: ServerResponse,
  decide: Decide,
  limits: BodyLimits,
): Promise<void> {
  const refuse = (status: number, error: string, message: string, headers?: string[]): void =>
    refuseBody(req, res, decide, { status, error, message, headers });
  const raw = await readBody(req, limits);
  // A refused body is not read further, so the connection cannot carry another request: close it.
  if (!raw.ok) return refuse(raw.status, raw.error, raw.message, ["connection", "close"]);
  let body: unknown;
  try {
    body = JSON.parse(raw.body.toString("utf8"));
  } catch (err) {
    return refuse(400, "invalid_json", `body: ${messageOf(err)}`);
  }
  const parsed = parseDecideBody(body);
  if (!parsed.ok) return refuse(400, "invalid_request", parsed.error);
  if (!parsed.batch)
    return sendJson(res, 200, publicAnswer(await decide(withTrace(fromBody(parsed.request), req), "decide")));
  const answers = await Promise.all(parsed.requests.map((r) => decide(withTrace(fromBody(r), req), "decide")));
  sendJson(res, 200, answers.map(publicAnswer));
}

/**
 * A body refused before any decision: recorded under a decision id (the request as received, POST /decide; the
 * sidecar's own request is in the body that could not be read), which the error answer carries.
 */
function refuseBody(
  req: IncomingMessage,
  res: ServerResponse,
  decide: Decide,
  {
    status,
    error,
    message,
    headers = [],
  }: { status: number; error: string; message: string; headers?: string[] | undefined },
): void {
  const received = { method: req.method ?? "POST", path: req.url ?? "/decide", token: undefined };
  const decisionId = decide.reject?.({
    adapter: "decide",
    req: withTrace(received, req),
    status,
    reason: error,
    message,
  });
  const body = decisionId === undefined ? { error, message } : { error, message, decision_id: decisionId };
  sendJson(res, status, body, headers);
}
