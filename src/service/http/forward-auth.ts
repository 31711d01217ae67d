/**
 * GET /forward-auth/nginx, /forward-auth/caddy and /forward-auth/traefik: a gateway's auth subrequest (what each
 * family trusts: gateway-headers.ts) decided and answered with the X-Portier-* headers. The generic /forward-auth
 * is not served (README, Gateways): the endpoint names the gateway in front. A request refused before any decision
 * (request_invalid: headers the gateway should have set or removed) is recorded as a decision is (its decision
 * id answered, its record on every sink of the decision log, counted in portier_requests_rejected_total) and
 * logged, as it is either a misconfigured gateway or a client forging headers.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { Decide } from "../decide/decide.js";
import { CLIENT_ADDRESS_HEADER } from "../gateway/request-trace.js";
import { isGatewayFamily, readForwardAuth, refusedRequest, withTrace, type GatewayFamily } from "./gateway-headers.js";
import { sendGatewayAnswer, sendGatewayRefusal } from "./write-answer.js";

const PREFIX = "/forward-auth/";
const NAME_THE_GATEWAY =
  "use /forward-auth/nginx (X-Original-Method, X-Original-URI), /forward-auth/caddy or /forward-auth/traefik " +
  "(X-Forwarded-Method, X-Forwarded-Uri)";

/** `endpoint`: the request's path without its query ("/forward-auth" or under PREFIX). */
export async function answerForwardAuth(
  req: IncomingMessage,
  res: ServerResponse,
  endpoint: string,
  decide: Decide,
  logger: Logger | undefined,
): Promise<void> {
  const family = endpoint.slice(PREFIX.length);
  req.resume();
  if (!isGatewayFamily(family)) return refuse(req, res, endpoint, undefined, NAME_THE_GATEWAY, decide, logger);
  const r = readForwardAuth(req, family);
  if (!r.ok) return refuse(req, res, endpoint, family, r.message, decide, logger);
  const request = withTrace(r.request, req, CLIENT_ADDRESS_HEADER[family]);
  sendGatewayAnswer(res, await decide(request, `forward-auth/${family}`));
}

function refuse(
  req: IncomingMessage,
  res: ServerResponse,
  endpoint: string,
  family: GatewayFamily | undefined,
  message: string,
  decide: Decide,
  logger: Logger | undefined,
): void {
  const reason = "request_invalid";
  const decisionId = decide.reject?.({
    adapter: family ? `forward-auth/${family}` : "forward-auth",
    req: family
      ? withTrace(refusedRequest(req, family), req, CLIENT_ADDRESS_HEADER[family])
      : refusedRequest(req, family),
    status: 403,
    reason,
    message,
  });
  logger?.warn(
    { event: "gateway_request_refused", endpoint, reason, message, decision_id: decisionId ?? null },
    "gateway request refused",
  );
  sendGatewayRefusal(res, message, decisionId);
}
