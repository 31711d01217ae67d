/**
 * What Portier trusts in a gateway's auth request, and the headers it answers with.
 *
 * Each forward-auth endpoint reads only the headers its gateway family sets itself on every auth request
 * (nginx: X-Original-Method/-URI from the shipped config; Caddy and Traefik: X-Forwarded-Method/-Uri/-Host,
 * which they overwrite), from `rawHeaders` so that duplicates are seen (Node folds or drops them in
 * `req.headers`). Every header of the family is required and must not be empty (the GATEWAY_FAMILIES table):
 * a request missing one did not come through that gateway. A request that also carries the other family's method/URI headers, or several values of
 * one trusted header, is refused: some gateway copied a client's header, and Portier cannot tell whose
 * value is the real one. Every adapter also requires at most one Authorization header.
 */
import type { IncomingMessage } from "node:http";
import { bearerToken } from "../../auth/index.js";
import type { DecisionAnswer, DecisionRequest, RequestTrace } from "../decide/decide.js";

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
/** Caddy and Traefik set X-Forwarded-Host on every auth request (the client's Host): a request without it did not come from them. */
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

/** What each family's forward-auth endpoint reads from the raw headers: its own, the foreign ones, Authorization. */
const READ_BY_FAMILY: Record<GatewayFamily, WantedHeaders> = {
  nginx: familyHeaders(GATEWAY_FAMILIES.nginx),
  caddy: familyHeaders(GATEWAY_FAMILIES.caddy),
  traefik: familyHeaders(GATEWAY_FAMILIES.traefik),
};
const AUTHORIZATION = wantedHeaders(["Authorization"]);

function familyHeaders(spec: FamilyHeaders): WantedHeaders {
  return wantedHeaders([...spec.own, ...spec.foreign, "Authorization"]);
}

export function isGatewayFamily(name: string): name is GatewayFamily {
  return Object.hasOwn(GATEWAY_FAMILIES, name);
}

/**
 * Every header Portier sets on a forward-auth or Envoy answer. On 200 all of them are sent (empty when not
 * applicable), so a gateway that copies them upstream replaces whatever the client sent under these names.
 */
export const PORTIER_HEADERS = [
  "X-Portier-Decision-Id",
  "X-Portier-Subject",
  "X-Portier-Tenant",
  "X-Portier-Roles",
  "X-Portier-Client-Id",
  "X-Portier-Flow",
  "X-Portier-Reason",
] as const;

/** Copy only safe characters into response headers. */
function headerValue(s: string): string {
  return s.replace(/[^\x20-\x7e]/g, "?");
}

/** The headers of an allow, as a flat name, value list: every X-Portier-* header (PORTIER_HEADERS, lower-cased), empty when not applicable. */
export function allowHeaders(a: DecisionAnswer): string[] {
  const s = a.subject;
  return [
    "x-portier-decision-id",
    a.decision_id,
    "x-portier-subject",
    headerValue(s?.sub ?? s?.client_id ?? ""),
    "x-portier-tenant",
    headerValue(s?.tenant_id ?? ""),
    "x-portier-roles",
    headerValue((s?.roles ?? []).join(",")),
    "x-portier-client-id",
    headerValue(s?.client_id ?? ""),
    "x-portier-flow",
    headerValue(a.flow ?? ""),
    "x-portier-reason",
    headerValue(a.reason),
  ];
}

/** The headers of a deny (flat name, value list): its decision id and reason, and on 401 the RFC 6750 challenge. */
export function denyHeaders(a: DecisionAnswer): string[] {
  const headers = ["x-portier-decision-id", a.decision_id, "x-portier-reason", a.reason];
  if (a.status === 401) headers.push("www-authenticate", a.www_authenticate ?? 'Bearer error="invalid_token"');
  return headers;
}

/** The JSON body of a deny (forward-auth, Envoy HTTP and gRPC). */
export function denyBody(a: DecisionAnswer): {
  allow: false;
  status: number;
  reason: string;
  message: string;
  decision_id: string;
} {
  return { allow: false, status: a.status, reason: a.reason, message: a.message, decision_id: a.decision_id };
}

/** Header names as rawValues looks them up: lower-cased name -> the name as written. */
type WantedHeaders = ReadonlyMap<string, string>;

function wantedHeaders(names: string[]): WantedHeaders {
  return new Map(names.map((n) => [n.toLowerCase(), n]));
}

/** Every value of the wanted headers, in order, from the raw header list (names compared case-insensitively). */
function rawValues(req: IncomingMessage, wanted: WantedHeaders): Map<string, string[]> {
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

/**
 * The bearer token of the one Authorization header; several headers (or another shape) are invalid. So is a
 * value holding a ",": a proxy that joins repeated headers (Envoy, in its ext_authz check) sends two
 * credentials as one value, and a token never holds a comma (RFC 6750 b64token).
 */
export function credentials(values: string[] | undefined): Pick<DecisionRequest, "token" | "authorizationInvalid"> {
  if (values !== undefined && values.length > 1) return { token: undefined, authorizationInvalid: true };
  const b = bearerToken(values?.[0]);
  if (b.token?.includes(",")) return { token: undefined, authorizationInvalid: true };
  return { token: b.token, ...(b.invalid ? { authorizationInvalid: true } : {}) };
}

export type GatewayRead = { ok: true; request: DecisionRequest } | { ok: false; message: string };

/** The decision request of a forward-auth call from the given gateway family, or why it is refused. */
export function readForwardAuth(req: IncomingMessage, family: GatewayFamily): GatewayRead {
  const spec = GATEWAY_FAMILIES[family];
  const seen = rawValues(req, READ_BY_FAMILY[family]);
  const foreign = spec.foreign.filter((n) => seen.has(n));
  if (foreign.length > 0) {
    return {
      ok: false,
      message: `/forward-auth/${family} reads ${spec.method} and ${spec.uri} only; the request also carries ${foreign.join(", ")}, so some hop passed a client's header`,
    };
  }
  const repeated = spec.own.filter((n) => (seen.get(n)?.length ?? 0) > 1);
  if (repeated.length > 0)
    return { ok: false, message: `several ${repeated.join(", ")} headers: exactly one is expected` };
  const absent = spec.required.filter((n) => !seen.get(n)?.[0]);
  if (absent.length > 0)
    return {
      ok: false,
      message: `${absent.join(", ")} missing or empty: /forward-auth/${family} requires ${spec.required.join(", ")} (set by the gateway on every auth request)`,
    };
  const method = seen.get(spec.method)![0]!;
  const uri = seen.get(spec.uri)![0]!;
  return { ok: true, request: { method, path: uriFromHeader(uri), ...credentials(seen.get("Authorization")) } };
}

/** Envoy ext_authz HTTP service: the original method and path are the check request's own; only Authorization is read. */
export function readEnvoy(req: IncomingMessage, path: string): DecisionRequest {
  return { method: req.method ?? "", path, ...credentials(rawValues(req, AUTHORIZATION).get("Authorization")) };
}

const MAX_TRACE_CHARS = 128;
const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

function printable(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const v = value
    .trim()
    .slice(0, MAX_TRACE_CHARS)
    .replace(/[^\x21-\x7e]/g, "?");
  return v === "" ? undefined : v;
}

/**
 * What the decision log records to tie a decision to the gateway's request (never used to decide):
 * X-Request-Id, a well-formed W3C traceparent, and the client address as the gateway reports it. Where that
 * address comes from depends on the gateway: nginx's shipped config sets X-Real-IP; Caddy, Traefik and Envoy
 * append to X-Forwarded-For, whose last entry is the one the nearest gateway added (earlier entries are
 * whatever the client sent). /decide records none: the sidecar is the caller. Values are bounded and printable.
 */
function requestTrace(
  req: IncomingMessage,
  address: "X-Real-IP" | "X-Forwarded-For" | undefined,
): RequestTrace | undefined {
  return traceOf(rawValues(req, TRACE_WANTED[address ?? "none"]), address);
}

const TRACE_WANTED = {
  "X-Real-IP": wantedHeaders(traceHeaders("X-Real-IP")),
  "X-Forwarded-For": wantedHeaders(traceHeaders("X-Forwarded-For")),
  none: wantedHeaders(traceHeaders(undefined)),
} as const;

/** The headers requestTrace reads, as named in the map traceOf takes. */
export function traceHeaders(address: "X-Real-IP" | "X-Forwarded-For" | undefined): string[] {
  return ["X-Request-Id", "traceparent", ...(address ? [address] : [])];
}

/** requestTrace of headers already read: `seen` maps each name of traceHeaders(address) to its values. */
export function traceOf(
  seen: Map<string, string[]>,
  address: "X-Real-IP" | "X-Forwarded-For" | undefined,
): RequestTrace | undefined {
  const requestId = printable(seen.get("X-Request-Id")?.at(-1));
  const tp = seen.get("traceparent")?.at(-1)?.trim().toLowerCase();
  const traceparent = tp !== undefined && TRACEPARENT.test(tp) ? tp : undefined;
  const clientAddress = address === undefined ? undefined : printable(seen.get(address)?.join(",").split(",").at(-1));
  if (requestId === undefined && traceparent === undefined && clientAddress === undefined) return undefined;
  return {
    ...(requestId !== undefined ? { requestId } : {}),
    ...(traceparent !== undefined ? { traceparent } : {}),
    ...(clientAddress !== undefined ? { clientAddress } : {}),
  };
}

/**
 * Adds the request id, traceparent and client address (where `address` says) that the decision log records to
 * `r`, a request just built by its adapter (set in place, no copy).
 */
export function withTrace(
  r: DecisionRequest,
  req: IncomingMessage,
  address?: "X-Real-IP" | "X-Forwarded-For",
): DecisionRequest {
  const trace = requestTrace(req, address);
  if (trace) r.trace = trace;
  return r;
}

/** Where each adapter finds the client address its gateway reports. */
export const CLIENT_ADDRESS_HEADER: Record<GatewayFamily | "envoy", "X-Real-IP" | "X-Forwarded-For"> = {
  nginx: "X-Real-IP",
  caddy: "X-Forwarded-For",
  traefik: "X-Forwarded-For",
  envoy: "X-Forwarded-For",
};
