/**
 * GET /forward-auth/nginx, /forward-auth/caddy and /forward-auth/traefik: a gateway's auth subrequest (what each
 * family trusts: gateway-headers.ts) decided and answered with the X-Portier-* headers. The generic /forward-auth
 * is not served (README, Gateways): the endpoint names the gateway in front. A request refused before any decision
 * (request_invalid: headers the gateway should have set or removed) is logged, as it is either a misconfigured
 * gateway or a client forging headers.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { Decide } from "../decide/decide.js";
import { CLIENT_ADDRESS_HEADER } from "../gateway/request-trace.js";
import { isGatewayFamily, readForwardAuth, withTrace } from "./gateway-headers.js";
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
  if (!isGatewayFamily(family)) return refuse(res, endpoint, NAME_THE_GATEWAY, logger);
  const r = readForwardAuth(req, family);
  if (!r.ok) return refuse(res, endpoint, r.message, logger);
  const request = withTrace(r.request, req, CLIENT_ADDRESS_HEADER[family]);
  sendGatewayAnswer(res, await decide(request, `forward-auth/${family}`));
}

function refuse(res: ServerResponse, endpoint: string, message: string, logger: Logger | undefined): void {
  logger?.warn(
    { event: "gateway_request_refused", endpoint, reason: "request_invalid", message },
    "gateway request refused",
  );
  sendGatewayRefusal(res, message);
}
