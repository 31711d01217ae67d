/**
 * The answer every gateway adapter gives (HTTP forward-auth, Envoy HTTP and gRPC ext_authz): the X-Portier-*
 * headers of an allow, the headers and JSON body of a deny. HTTP and gRPC both import it; neither imports the other.
 */
import type { DecisionAnswer } from "../decide/types.js";

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

/**
 * The headers of an allow, as a flat name, value list: every X-Portier-* header (lower-cased), empty when not
 * applicable.
 */
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

export interface DenyBody {
  allow: false;
  status: number;
  reason: string;
  message: string;
  decision_id: string;
}

/** The JSON body of a deny. */
export function denyBody(a: DecisionAnswer): DenyBody {
  return { allow: false, status: a.status, reason: a.reason, message: a.message, decision_id: a.decision_id };
}
