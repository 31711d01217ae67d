/**
 * What Portier trusts in a gateway's HTTP auth request.
 *
 * Each forward-auth endpoint reads only the headers its gateway family sets itself on every auth request
 * (nginx: X-Original-Method/-URI from the shipped config; Caddy and Traefik: X-Forwarded-Method/-Uri/-Host,
 * which they overwrite), from `rawHeaders` so that duplicates are seen (Node folds or drops them in
 * `req.headers`). Every header of the family is required and must not be empty (the GATEWAY_FAMILIES table):
 * a request missing one did not come through that gateway. A request that also carries the other family's
 * method/URI headers, or several values of one trusted header, is refused: some gateway copied a client's
 * header, and Portier cannot tell whose value is the real one. Every adapter also requires at most one
 * Authorization header (../gateway/credentials.ts).
 */
import type { IncomingMessage } from "node:http";
import type { DecisionRequest } from "../decide/decide.js";
import { credentials } from "../gateway/credentials.js";
import { requestTrace, TRACE_HEADERS, type ClientAddressHeader } from "../gateway/request-trace.js";

export type GatewayFamily = "nginx" | "caddy" | "traefik";

interface FamilyHeaders {
  method: string;
  uri: string;
  /** Headers of this family: each may appear at most once. */
  own: string[];
  /** Headers of this family the gateway sets on every auth request: each must be present and not empty. */
  required: string[];
  /** The other family's method/URI headers: their presence refuses the request. */
  foreign: string[];
}

const ORIGINAL = ["X-Original-Method", "X-Original-URI"];
const FORWARDED = ["X-Forwarded-Method", "X-Forwarded-Uri"];
/** Caddy and Traefik set X-Forwarded-Host on every auth request (the client's Host): a request without it did not come
 * from them. */
const FORWARDED_OWN = [...FORWARDED, "X-Forwarded-Host"];
const FORWARDED_FAMILY: FamilyHeaders = {
  method: "X-Forwarded-Method",
  uri: "X-Forwarded-Uri",
  own: FORWARDED_OWN,
  required: FORWARDED_OWN,
  foreign: ORIGINAL,
};

const GATEWAY_FAMILIES: Record<GatewayFamily, FamilyHeaders> = {
  nginx: { method: "X-Original-Method", uri: "X-Original-URI", own: ORIGINAL, required: ORIGINAL, foreign: FORWARDED },
  caddy: FORWARDED_FAMILY,
  traefik: FORWARDED_FAMILY,
};

export function isGatewayFamily(name: string): name is GatewayFamily {
  return Object.hasOwn(GATEWAY_FAMILIES, name);
}

/** Every value of the named headers, in order, from the raw header list (names compared case-insensitively). */
function rawValues(req: IncomingMessage, names: readonly string[]): Map<string, string[]> {
  const wanted = new Map(names.map((n) => [n.toLowerCase(), n]));
  const out = new Map<string, string[]>();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = wanted.get(raw[i]!.toLowerCase());
    if (name === undefined) continue;
    const list = out.get(name);
    if (list) list.push(raw[i + 1]!);
    else out.set(name, [raw[i + 1]!]);
  }
  return out;
}

/**
 * Node hands header bytes over as latin1 characters. A gateway passes a raw UTF-8 URI byte for byte (nginx's
 * $request_uri), so bytes 0x80-0xff are turned back into percent-escapes: the path normaliser then decodes
 * them as UTF-8 like any escaped path, and refuses invalid UTF-8 (path_invalid).
 */
function uriFromHeader(value: string): string {
  return value.replace(/[\u0080-\u00ff]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export type GatewayRead = { ok: true; request: DecisionRequest } | { ok: false; message: string };

/** The decision request of a forward-auth call from the given gateway family, or why it is refused. */
export function readForwardAuth(req: IncomingMessage, family: GatewayFamily): GatewayRead {
  const spec = GATEWAY_FAMILIES[family];
  const seen = rawValues(req, [...spec.own, ...spec.foreign, "Authorization"]);
  const foreign = spec.foreign.filter((n) => seen.has(n));
  if (foreign.length > 0) {
    return {
      ok: false,
      message:
        `/forward-auth/${family} reads ${spec.method} and ${spec.uri} only; the request also carries ` +
        `${foreign.join(", ")}, so some hop passed a client's header`,
    };
  }
  const repeated = spec.own.filter((n) => (seen.get(n)?.length ?? 0) > 1);
  if (repeated.length > 0)
    return { ok: false, message: `several ${repeated.join(", ")} headers: exactly one is expected` };
  const absent = spec.required.filter((n) => !seen.get(n)?.[0]);
  if (absent.length > 0)
    return {
      ok: false,
      message:
        `${absent.join(", ")} missing or empty: /forward-auth/${family} requires ` +
        `${spec.required.join(", ")} (set by the gateway on every auth request)`,
    };
  const method = seen.get(spec.method)![0]!;
  const uri = seen.get(spec.uri)![0]!;
  return { ok: true, request: { method, path: uriFromHeader(uri), ...credentials(seen.get("Authorization")) } };
}

/**
 * What a refused forward-auth request said it was for, for its record only (never decided on): the first
 * method and URI header of the family, bounded; "" where absent.
 */
export function refusedRequest(req: IncomingMessage, family: GatewayFamily | undefined): DecisionRequest {
  const spec = family && GATEWAY_FAMILIES[family];
  const seen = spec ? rawValues(req, [spec.method, spec.uri]) : new Map<string, string[]>();
  const method = (spec && seen.get(spec.method)?.[0]) ?? "";
  const uri = (spec && seen.get(spec.uri)?.[0]) ?? "";
  return { method: method.slice(0, MAX_RECORDED_METHOD), path: uriFromHeader(uri), token: undefined };
}

/** A method longer than this is not one (the longest registered HTTP method has 17 characters). */
const MAX_RECORDED_METHOD = 32;

/** Envoy ext_authz HTTP service: the original method and path are the check request's own; only Authorization is read.
 * */
export function readEnvoy(req: IncomingMessage, path: string): DecisionRequest {
  return { method: req.method ?? "", path, ...credentials(rawValues(req, ["Authorization"]).get("Authorization")) };
}

/**
 * Adds the request id, traceparent and client address (where `address` says) that the decision log records, and
 * the trace context the span is parented on (../gateway/request-trace.ts), to `r`, a request just built by its
 * adapter. `names`: the trace headers this adapter reads (TRACE_HEADERS, or with B3_HEADERS for Envoy).
 */
export function withTrace(
  r: DecisionRequest,
  req: IncomingMessage,
  address?: ClientAddressHeader,
  names: readonly string[] = TRACE_HEADERS,
): DecisionRequest {
  const trace = requestTrace(rawValues(req, address ? [...names, address] : names), address);
  if (trace) r.trace = trace;
  return r;
}
