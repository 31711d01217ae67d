/**
 * The decision adapters on plain node:http (Express costs ~5x a bare server on this path): POST /decide,
 * /forward-auth (nginx, Traefik, Caddy) and Envoy ext_authz under /envoy. Each maps its request to a
 * DecisionRequest and the answer back; everything else goes to the Express app.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { bearerToken, type Decide, type DecisionAnswer, type DecisionRequest } from "./decide.js";
import { parseDecideBody, type DecideBody } from "./decide-body.js";
import { readBody, type BodyLimits } from "./read-body.js";

function fromBody(body: DecideBody): DecisionRequest {
  let auth: string | undefined;
  for (const [name, value] of Object.entries(body.headers ?? {})) if (name.toLowerCase() === "authorization") auth = value;
  if (body.token !== undefined) return { method: body.method, path: body.path, token: body.token || undefined };
  const b = bearerToken(auth);
  return { method: body.method, path: body.path, token: b.token, ...(b.invalid ? { authorizationInvalid: true } : {}) };
}

function publicAnswer(a: DecisionAnswer): Omit<DecisionAnswer, "www_authenticate"> {
  const { www_authenticate: _omit, ...rest } = a;
  return rest;
}

function one(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** Copy only safe characters into response headers. */
function headerValue(s: string): string {
  return s.replace(/[^\x20-\x7e]/g, "?");
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { ...headers, "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function sendGateway(res: ServerResponse, a: DecisionAnswer): void {
  const headers: Record<string, string> = { "x-portier-decision-id": a.decision_id, "cache-control": "no-store" };
  if (a.allow) {
    const s = a.subject;
    headers["x-portier-subject"] = headerValue(s?.sub ?? s?.client_id ?? "");
    headers["x-portier-tenant"] = headerValue(s?.tenant_id ?? "");
    headers["x-portier-roles"] = headerValue((s?.roles ?? []).join(","));
    if (s?.client_id) headers["x-portier-client-id"] = headerValue(s.client_id);
    if (a.flow) headers["x-portier-flow"] = a.flow;
    return sendJson(res, 200, { allow: true, decision_id: a.decision_id }, headers);
  }
  headers["x-portier-reason"] = a.reason;
  if (a.status === 401) headers["www-authenticate"] = a.www_authenticate ?? 'Bearer error="invalid_token"';
  sendJson(res, a.status === 401 ? 401 : 403, { allow: false, status: a.status, reason: a.reason, message: a.message, decision_id: a.decision_id }, headers);
}

function gatewayRequest(req: IncomingMessage, method: string | undefined, uri: string | undefined): DecisionRequest | undefined {
  if (!method || !uri) return undefined;
  const b = bearerToken(req.headers.authorization);
  return { method, path: uri, token: b.token, ...(b.invalid ? { authorizationInvalid: true } : {}) };
}

function gatewayBad(res: ServerResponse, message: string): void {
  sendJson(res, 403, { allow: false, status: 403, reason: "request_invalid", message }, { "x-portier-reason": "request_invalid", "cache-control": "no-store" });
}

async function handleDecide(req: IncomingMessage, res: ServerResponse, decide: Decide, limits: BodyLimits): Promise<void> {
  const raw = await readBody(req, limits);
  // A refused body is not read further, so the connection cannot carry another request: close it.
  if (!raw.ok) return sendJson(res, raw.status, { error: raw.error, message: raw.message }, { connection: "close" });
  let body: unknown;
  try {
    body = JSON.parse(raw.body.toString("utf8"));
  } catch (err) {
    return sendJson(res, 400, { error: "invalid_json", message: `body: ${(err as Error).message}` });
  }
  const parsed = parseDecideBody(body);
  if (!parsed.ok) return sendJson(res, 400, { error: "invalid_request", message: parsed.error });
  if (!parsed.batch) return sendJson(res, 200, publicAnswer(await decide(fromBody(parsed.request), "decide")));
  const answers = await Promise.all(parsed.requests.map((r) => decide(fromBody(r), "decide")));
  sendJson(res, 200, answers.map(publicAnswer));
}

/** A request listener that answers the decision endpoints and passes anything else to `next`. */
export function decisionListener(decide: Decide, limits: BodyLimits, next: (req: IncomingMessage, res: ServerResponse) => void) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const url = req.url ?? "/";
    let work: Promise<void> | undefined;
    if (url === "/forward-auth" || url.startsWith("/forward-auth?")) {
      const method = one(req.headers["x-original-method"]) ?? one(req.headers["x-forwarded-method"]);
      const uri = one(req.headers["x-original-uri"]) ?? one(req.headers["x-forwarded-uri"]);
      const r = gatewayRequest(req, method, uri);
      req.resume();
      if (!r) return gatewayBad(res, "X-Original-Method/X-Original-URI (nginx) or X-Forwarded-Method/X-Forwarded-Uri (Traefik, Caddy) are required");
      work = decide(r, "forward-auth").then((a) => sendGateway(res, a));
    } else if (url.startsWith("/envoy/") || url === "/envoy") {
      // Envoy ext_authz HTTP service: the original request's method, path (after the prefix) and headers.
      const r = gatewayRequest(req, req.method, url.slice("/envoy".length) || "/");
      req.resume();
      if (!r) return gatewayBad(res, "no original path");
      work = decide(r, "envoy").then((a) => sendGateway(res, a));
    } else if (req.method === "POST" && (url === "/decide" || url.startsWith("/decide?"))) {
      work = handleDecide(req, res, decide, limits);
    } else {
      return next(req, res);
    }
    // Fail closed, never crash: an unexpected error answers a deny.
    work.catch(() => {
      if (!res.headersSent) sendJson(res, url.startsWith("/decide") ? 500 : 403, { allow: false, error: "internal_error", reason: "internal_error" });
      else res.destroy();
    });
  };
}
