/**
 * Envoy ext_authz over gRPC (envoy.service.auth.v3.Authorization/Check): a CheckRequest mapped to the
 * DecisionRequest every adapter hands to decide, and the answer mapped back to a CheckResponse. Pure
 * functions over the messages as @grpc/proto-loader decodes them (keepCase, enums as names); server.ts
 * wires them to the socket.
 *
 * Trust is that of the HTTP Envoy adapter: the judged path is exactly attributes.request.http.path (the
 * request target with its query, not decoded; normalised by decide like every path), the token only from
 * the `authorization` header (gateway-headers.ts credentials: one Bearer credential; Envoy joins repeated
 * headers with ",", and such a value is token_malformed), methods as given. Nothing else in the request
 * decides; X-Request-Id, traceparent and the last X-Forwarded-For entry go to the decision log only. The
 * decision's span is parented on the call's own trace context (the ext_authz span Envoy injects into the gRPC
 * metadata) or else on the checked request's (W3C, else B3).
 */
import type { DecisionAnswer, DecisionRequest } from "../decide/decide.js";
import { allowHeaders, denyBody, denyHeaders, PORTIER_HEADERS } from "../gateway/answer.js";
import { credentials } from "../gateway/credentials.js";
import {
  B3_HEADERS,
  CLIENT_ADDRESS_HEADER,
  CONTEXT_HEADERS,
  requestTrace,
  traceContext,
  TRACE_HEADERS,
} from "../gateway/request-trace.js";
import type { TraceHeaders } from "../tracing/decision-tracer.js";

/** The fields of envoy.service.auth.v3.CheckRequest that Portier reads (everything else is ignored). */
export interface CheckRequestMessage {
  attributes?: {
    request?: {
      http?: {
        id?: string;
        method?: string;
        headers?: Record<string, string>;
        /** Set instead of `headers` when Envoy's encode_raw_headers is on: one entry per header line. */
        header_map?: { headers?: { key?: string; value?: string; raw_value?: Uint8Array }[] };
        path?: string;
        host?: string;
      } | null;
    } | null;
  } | null;
}

interface HeaderValueOption {
  header: { key: string; value: string };
  append_action?: "OVERWRITE_IF_EXISTS_OR_ADD";
}

/** google.protobuf.Value: protobufjs defines the well-known types with camelCase names, whatever keepCase says. */
type StructValue = { stringValue: string } | { nullValue: "NULL_VALUE" };

/** envoy.service.auth.v3.CheckResponse, as proto-loader encodes it. */
export interface CheckResponseMessage {
  status: { code: number; message: string };
  ok_response?: { headers: HeaderValueOption[]; headers_to_remove: string[] };
  denied_response?: { status: { code: number }; headers: HeaderValueOption[]; body: string };
  dynamic_metadata: { fields: Record<string, StructValue> };
}

/** google.rpc.Code values a CheckResponse status carries. */
export const RPC_CODE = { OK: 0, PERMISSION_DENIED: 7, UNAUTHENTICATED: 16 } as const;

export type CheckRead =
  { ok: true; request: DecisionRequest; clientPortierHeaders: string[] } | { ok: false; message: string };

const WANTED = new Map(
  [...TRACE_HEADERS, ...B3_HEADERS, CLIENT_ADDRESS_HEADER.envoy, "Authorization"].map((n) => [n.toLowerCase(), n]),
);
const PORTIER_PREFIX = "x-portier-";

/**
 * The request's headers Portier reads, by their canonical name, every value kept (a name repeated in
 * header_map, or sent both as `headers` and `header_map`, counts twice), and the x-portier-* names it carries.
 */
function readHeaders(
  http: NonNullable<NonNullable<NonNullable<CheckRequestMessage["attributes"]>["request"]>["http"]>,
): { seen: Map<string, string[]>; portier: Set<string> } {
  const seen = new Map<string, string[]>();
  const portier = new Set<string>();
  const add = (key: string, value: string): void => {
    const lower = key.toLowerCase();
    if (lower.startsWith(PORTIER_PREFIX)) portier.add(lower);
    const name = WANTED.get(lower);
    if (name === undefined) return;
    const list = seen.get(name);
    if (list) list.push(value);
    else seen.set(name, [value]);
  };
  for (const [key, value] of Object.entries(http.headers ?? {})) add(key, String(value));
  for (const h of http.header_map?.headers ?? []) {
    // raw_value bytes are read as Node reads HTTP header bytes (latin1).
    add(h.key ?? "", h.value || (h.raw_value ? Buffer.from(h.raw_value).toString("latin1") : ""));
  }
  return { seen, portier };
}

/**
 * The decision request of a Check, or why Portier cannot read it (answered with a 400 deny). A path that
 * arrived as invalid UTF-8 reaches us with U+FFFD where the bad bytes were (protobuf's lenient decoding); it
 * is passed on as the escape of an invalid byte, so the normaliser refuses it as path_invalid exactly as
 * the HTTP adapters refuse raw invalid bytes. (A literal U+FFFD in a request target is refused with it.)
 */
export function readCheckRequest(msg: CheckRequestMessage | null | undefined, callTrace?: TraceHeaders): CheckRead {
  const attributes = msg?.attributes;
  if (!attributes)
    return { ok: false, message: "attributes is missing: send the CheckRequest Envoy's ext_authz filter sends" };
  const http = attributes.request?.http;
  if (!http) return { ok: false, message: "attributes.request.http is missing: Portier judges HTTP requests only" };
  if (!http.method) return { ok: false, message: "attributes.request.http.method is empty" };
  if (!http.path) return { ok: false, message: "attributes.request.http.path is empty" };
  const { seen, portier } = readHeaders(http);
  const request: DecisionRequest = {
    method: http.method,
    path: http.path.replace(/\uFFFD/g, "%FF"),
    ...credentials(seen.get("Authorization")),
  };
  const trace = requestTrace(seen, CLIENT_ADDRESS_HEADER.envoy);
  if (trace) request.trace = trace;
  if (callTrace) request.trace = { ...trace, headers: callTrace };
  return { ok: true, request, clientPortierHeaders: [...portier] };
}

/**
 * The trace-context headers of the gRPC call's metadata (`get`: grpc-js Metadata's, lower-case keys), text values
 * only, or undefined when it carries none.
 */
export function callTraceContext(get: (key: string) => readonly (string | Buffer)[]): TraceHeaders | undefined {
  const seen = new Map<string, string[]>();
  for (const name of CONTEXT_HEADERS) {
    const values = get(name);
    if (values.length > 0)
      seen.set(
        name,
        values.filter((v): v is string => typeof v === "string"),
      );
  }
  return traceContext(seen);
}

/** A flat name, value list as Envoy's HeaderValueOptions that replace any header of the name (never append). */
function headerOptions(flat: string[]): HeaderValueOption[] {
  const out: HeaderValueOption[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2)
    out.push({ header: { key: flat[i]!, value: flat[i + 1]! }, append_action: "OVERWRITE_IF_EXISTS_OR_ADD" });
  return out;
}

function text(value: string | null | undefined): StructValue {
  return value === null || value === undefined ? { nullValue: "NULL_VALUE" } : { stringValue: value };
}

/** What Envoy's access log can print (%DYNAMIC_METADATA(envoy.filters.http.ext_authz:decision_id)%, ...). */
function metadata(a: {
  decision_id: string | null;
  reason: string;
  flow: string | null;
  route: string | null;
}): CheckResponseMessage["dynamic_metadata"] {
  return {
    fields: { decision_id: text(a.decision_id), reason: text(a.reason), flow: text(a.flow), route: text(a.route) },
  };
}

const PORTIER_SET = new Set(PORTIER_HEADERS.map((h) => h.toLowerCase()));

/**
 * An answer as a CheckResponse. Allow: OK, every X-Portier-* header set (overwriting), and every other
 * x-portier-* header the client sent removed (those Portier sets are overwritten already; Envoy applies
 * removals after sets, so naming them would drop Portier's own values). Deny: UNAUTHENTICATED (401, with
 * WWW-Authenticate) or PERMISSION_DENIED (403), with Portier's JSON deny as the body Envoy returns.
 */
export function checkResponse(a: DecisionAnswer, clientPortierHeaders: readonly string[]): CheckResponseMessage {
  const dynamic_metadata = metadata({
    decision_id: a.decision_id,
    reason: a.reason,
    flow: a.flow ?? null,
    route: a.route?.template ?? null,
  });
  if (a.allow) {
    return {
      status: { code: RPC_CODE.OK, message: "" },
      ok_response: {
        headers: headerOptions(allowHeaders(a)),
        headers_to_remove: clientPortierHeaders.filter((h) => !PORTIER_SET.has(h)),
      },
      dynamic_metadata,
    };
  }
  const unauthenticated = a.status === 401;
  return {
    status: { code: unauthenticated ? RPC_CODE.UNAUTHENTICATED : RPC_CODE.PERMISSION_DENIED, message: a.reason },
    denied_response: {
      status: { code: unauthenticated ? 401 : 403 },
      headers: headerOptions([
        ...denyHeaders(a),
        "content-type",
        "application/json; charset=utf-8",
        "cache-control",
        "no-store",
      ]),
      body: JSON.stringify(denyBody(a)),
    },
    dynamic_metadata,
  };
}

/**
 * A Check Portier cannot read: PERMISSION_DENIED with a 400 body (as OPA-Envoy answers one), with the decision id
 * it was recorded under.
 */
export function badRequestResponse(message: string, decisionId?: string): CheckResponseMessage {
  const id = decisionId === undefined ? [] : ["x-portier-decision-id", decisionId];
  return {
    status: { code: RPC_CODE.PERMISSION_DENIED, message: "request_invalid" },
    denied_response: {
      status: { code: 400 },
      headers: headerOptions([
        ...id,
        "x-portier-reason",
        "request_invalid",
        "content-type",
        "application/json; charset=utf-8",
        "cache-control",
        "no-store",
      ]),
      body: JSON.stringify({ allow: false, status: 400, reason: "request_invalid", message }),
    },
    dynamic_metadata: metadata({ decision_id: decisionId ?? null, reason: "request_invalid", flow: null, route: null }),
  };
}
