/**
 * The answer writers of the HTTP decision adapters, on plain node:http: JSON with its length, and a gateway's
 * answer (forward-auth and Envoy HTTP) with its X-Portier-* headers (gateway-headers.ts), never cached.
 */
import type { ServerResponse } from "node:http";
import type { DecisionAnswer } from "../decide/decide.js";
import { allowHeaders, denyBody, denyHeaders } from "../gateway/answer.js";

/** `headers`: a flat list, name then value (node:http takes it as is, without building a header object). */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: string[] = []): void {
  const text = JSON.stringify(body);
  headers.push("content-type", "application/json; charset=utf-8", "content-length", String(Buffer.byteLength(text)));
  res.writeHead(status, headers);
  res.end(text);
}

/** A decision to a gateway: 200 with the allow headers, or 401/403 with the deny's. */
export function sendGatewayAnswer(res: ServerResponse, a: DecisionAnswer): void {
  // On allow every X-Portier-* header (PORTIER_HEADERS), empty when not applicable, so the gateway replaces each one.
  if (a.allow)
    return sendJson(res, 200, { allow: true, decision_id: a.decision_id }, [
      ...allowHeaders(a),
      "cache-control",
      "no-store",
    ]);
  sendJson(res, a.status === 401 ? 401 : 403, denyBody(a), [...denyHeaders(a), "cache-control", "no-store"]);
}

/**
 * A gateway request refused before any decision (request_invalid); X-Portier-Decision-Id names the record it was
 * recorded under (a gateway keeps it as it keeps a deny's).
 */
export function sendGatewayRefusal(res: ServerResponse, message: string, decisionId: string | undefined): void {
  const headers = ["x-portier-reason", "request_invalid", "cache-control", "no-store"];
  if (decisionId !== undefined) headers.push("x-portier-decision-id", decisionId);
  sendJson(res, 403, { allow: false, status: 403, reason: "request_invalid", message }, headers);
}
