/**
 * The decision adapters on plain node:http (Express costs ~5x a bare server on this path): POST /decide,
 * /forward-auth/nginx, /forward-auth/caddy, /forward-auth/traefik (what each trusts: gateway-headers.ts)
 * and Envoy ext_authz under /envoy. Each maps its request to a DecisionRequest and the answer back;
 * everything else goes to the Express app.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import { messageOf } from "../../errors/caught.js";
import { bearerToken } from "../../auth/index.js";
import { whenAnswered, type Decide, type DecisionAnswer, type DecisionRequest } from "../decide/decide.js";
import { parseDecideBody, type DecideBody } from "./decide-body.js";
import {
  allowHeaders,
  CLIENT_ADDRESS_HEADER,
  denyBody,
  denyHeaders,
  isGatewayFamily,
  readEnvoy,
  readForwardAuth,
  requestTrace,
} from "./gateway-headers.js";
import { readBody, type BodyLimits } from "./read-body.js";

/** Adds the request id, traceparent and client address (where `address` says) that the decision log records. `r` is new: set in place. */
function withTrace(
  r: DecisionRequest,
  req: IncomingMessage,
  address?: "X-Real-IP" | "X-Forwarded-For",
): DecisionRequest {
  const trace = requestTrace(req, address);
  if (trace) r.trace = trace;
  return r;
}

function fromBody(body: DecideBody): DecisionRequest {
  let auth: string | undefined;
  for (const [name, value] of Object.entries(body.headers ?? {}))
    if (name.toLowerCase() === "authorization") auth = value;
  if (body.token !== undefined) return { method: body.method, path: body.path, token: body.token || undefined };
  const b = bearerToken(auth);
  return { method: body.method, path: body.path, token: b.token, ...(b.invalid ? { authorizationInvalid: true } : {}) };
}

function publicAnswer(a: DecisionAnswer): Omit<DecisionAnswer, "www_authenticate"> {
  const { www_authenticate: _omit, ...rest } = a;
  return rest;
}

/** `headers`: a flat list, name then value (node:http takes it as is, without building a header object). */
function sendJson(res: ServerResponse, status: number, body: unknown, headers: string[] = []): void {
  const text = JSON.stringify(body);
  headers.push("content-type", "application/json; charset=utf-8", "content-length", String(Buffer.byteLength(text)));
  res.writeHead(status, headers);
  res.end(text);
}

function sendGateway(res: ServerResponse, a: DecisionAnswer): void {
  // On allow every X-Portier-* header (PORTIER_HEADERS), empty when not applicable, so the gateway replaces each one.
  if (a.allow)
    return sendJson(res, 200, { allow: true, decision_id: a.decision_id }, [
      ...allowHeaders(a),
      "cache-control",
      "no-store",
    ]);
  sendJson(res, a.status === 401 ? 401 : 403, denyBody(a), [...denyHeaders(a), "cache-control", "no-store"]);
}

function gatewayBad(res: ServerResponse, message: string): void {
  sendJson(res, 403, { allow: false, status: 403, reason: "request_invalid", message }, [
    "x-portier-reason",
    "request_invalid",
    "cache-control",
    "no-store",
  ]);
}

async function handleDecide(
  req: IncomingMessage,
  res: ServerResponse,
  decide: Decide,
  limits: BodyLimits,
): Promise<void> {
  const raw = await readBody(req, limits);
  // A refused body is not read further, so the connection cannot carry another request: close it.
  if (!raw.ok) return sendJson(res, raw.status, { error: raw.error, message: raw.message }, ["connection", "close"]);
  let body: unknown;
  try {
    body = JSON.parse(raw.body.toString("utf8"));
  } catch (err) {
    return sendJson(res, 400, { error: "invalid_json", message: `body: ${messageOf(err)}` });
  }
  const parsed = parseDecideBody(body);
  if (!parsed.ok) return sendJson(res, 400, { error: "invalid_request", message: parsed.error });
  if (!parsed.batch)
    return sendJson(res, 200, publicAnswer(await decide(withTrace(fromBody(parsed.request), req), "decide")));
  const answers = await Promise.all(parsed.requests.map((r) => decide(withTrace(fromBody(r), req), "decide")));
  sendJson(res, 200, answers.map(publicAnswer));
}

/**
 * A request listener that answers the decision endpoints and passes anything else to `next`. A gateway request
 * refused before any decision (request_invalid: headers the gateway should have set or removed) is logged, as
 * it is either a misconfigured gateway or a client forging headers.
 */
export function decisionListener(
  decide: Decide,
  limits: BodyLimits,
  next: (req: IncomingMessage, res: ServerResponse) => void,
  logger?: Logger,
) {
  const refuse = (res: ServerResponse, endpoint: string, message: string): void => {
    logger?.warn(
      { event: "gateway_request_refused", endpoint, reason: "request_invalid", message },
      "gateway request refused",
    );
    gatewayBad(res, message);
  };
  return (req: IncomingMessage, res: ServerResponse): void => {
    const url = req.url ?? "/";
    let work: Promise<void> | undefined;
    // Fail closed, never crash: an unexpected error answers a deny.
    const failed = (): void => {
      if (!res.headersSent)
        sendJson(res, url.startsWith("/decide") ? 500 : 403, {
          allow: false,
          error: "internal_error",
          reason: "internal_error",
        });
      else res.destroy();
    };
    // Caddy keeps the original query string on the auth request: the endpoint is the path before "?".
    const endpoint = url.split("?", 1)[0]!;
    // A synchronous answer (cached token, in-process engine) is sent in this call: its errors are caught here.
    try {
      if (endpoint === "/forward-auth" || endpoint.startsWith("/forward-auth/")) {
        const family = endpoint.slice("/forward-auth/".length);
        req.resume();
        // The generic /forward-auth is not served (README, Gateways): the endpoint names the gateway in front.
        if (!isGatewayFamily(family))
          return refuse(
            res,
            endpoint,
            "use /forward-auth/nginx (X-Original-Method, X-Original-URI), /forward-auth/caddy or /forward-auth/traefik (X-Forwarded-Method, X-Forwarded-Uri)",
          );
        const r = readForwardAuth(req, family);
        if (!r.ok) return refuse(res, endpoint, r.message);
        work = whenAnswered(
          decide(withTrace(r.request, req, CLIENT_ADDRESS_HEADER[family]), `forward-auth/${family}`),
          sendGateway,
          res,
        );
      } else if (url.startsWith("/envoy/") || url === "/envoy") {
        // Envoy ext_authz HTTP service: the original request's method and path (after the prefix); Authorization.
        const r = readEnvoy(req, url.slice("/envoy".length) || "/");
        req.resume();
        work = whenAnswered(decide(withTrace(r, req, CLIENT_ADDRESS_HEADER.envoy), "envoy"), sendGateway, res);
      } else if (req.method === "POST" && (url === "/decide" || url.startsWith("/decide?"))) {
        work = handleDecide(req, res, decide, limits);
      } else {
        return next(req, res);
      }
    } catch {
      return failed();
    }
    work?.catch(failed);
  };
}
