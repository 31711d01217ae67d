/**
 * GET /forward-auth/nginx, /forward-auth/caddy and /forward-auth/traefik: a gateway's auth subrequest (what each
 * family trusts: gateway-headers.ts) decided and answered with the X-Portier-* headers. The generic /forward-auth
 * is not served (README, Gateways): the endpoint names the gateway in front. A request refused before any decision
 * (request_invalid: headers the gateway should have set or removed) is logged, as it is either a misconfigured
 * gateway or a client forging headers.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import { whenAnswered, type Decide } from "../decide/decide.js";
import { CLIENT_ADDRESS_HEADER, isGatewayFamily, readForwardAuth, withTrace } from "./gateway-headers.js";
import { sendGatewayAnswer, sendGatewayRefusal } from "./write-answer.js";

const PREFIX = "/forward-auth/";
const NAME_THE_GATEWAY =
  "use /forward-auth/nginx (X-Original-Method, X-Original-URI), /forward-auth/caddy or /forward-auth/traefik " +
  "(X-Forwarded-Method, X-Forwarded-Uri)";

/** `endpoint`: the request's path without its query ("/forward-auth" or under PREFIX). A promise while pending. */
export function answerForwardAuth(
  req: IncomingMessage,
  res: ServerResponse,
  endpoint: string,
  decide: Decide,
  logger: Logger | undefined,
): Promise<void> | undefined {
  const family = endpoint.slice(PREFIX.length);
  req.resume();
  if (!isGatewayFamily(family)) {
    refuse(res, endpoint, NAME_THE_GATEWAY, logger);
    return undefined;
  }
  const r = readForwardAuth(req, family);
  if (!r.ok) {
    refuse(res, endpoint, r.message, logger);
    return undefined;
  }
  const request = withTrace(r.request, req, CLIENT_ADDRESS_HEADER[family]);
  return whenAnswered(decide(request, `forward-auth/${family}`), sendGatewayAnswer, res);
}

function refuse(res: ServerResponse, endpoint: string, message: string, logger: Logger | undefined): void {
  logger?.warn(
    { event: "gateway_request_refused", endpoint, reason: "request_invalid", message },
    "gateway request refused",
  );
  sendGatewayRefusal(res, message);
}
