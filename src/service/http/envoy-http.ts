/**
 * Envoy's ext_authz HTTP service under /envoy: the checked request's method, its path after the prefix and its
 * Authorization header (gateway-headers.ts readEnvoy), decided and answered as to any gateway. The gRPC service is
 * src/service/grpc/.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Decide } from "../decide/decide.js";
import { B3_HEADERS, CLIENT_ADDRESS_HEADER, TRACE_HEADERS } from "../gateway/request-trace.js";
import { readEnvoy, withTrace } from "./gateway-headers.js";
import { sendGatewayAnswer } from "./write-answer.js";

export const ENVOY_PREFIX = "/envoy";

/** Envoy sends its span as W3C or B3, whichever its tracer speaks. */
const ENVOY_TRACE_HEADERS = [...TRACE_HEADERS, ...B3_HEADERS];

/** `url`: the request target, "/envoy" or under "/envoy/". */
export async function answerEnvoy(req: IncomingMessage, res: ServerResponse, url: string, decide: Decide) {
  const r = readEnvoy(req, url.slice(ENVOY_PREFIX.length) || "/");
  req.resume();
  sendGatewayAnswer(res, await decide(withTrace(r, req, CLIENT_ADDRESS_HEADER.envoy, ENVOY_TRACE_HEADERS), "envoy"));
}
