/**
 * What the decision log records to tie a decision to the gateway's request (never used to decide): X-Request-Id,
 * a well-formed W3C traceparent, and the client address as the gateway reports it; and the trace-context headers
 * the decision's span is parented on (with tracing on): W3C from every adapter, B3 from Envoy's only. Where that
 * address comes from
 * depends on the gateway (CLIENT_ADDRESS_HEADER): nginx's shipped config sets X-Real-IP; Caddy, Traefik and Envoy
 * append to X-Forwarded-For, whose last entry is the one the nearest gateway added (earlier entries are whatever
 * the client sent). /decide records none: the sidecar is the caller. Values are bounded and printable.
 */
import { parseTraceparent } from "../decide/traceparent.js";
import type { RequestTrace } from "../decide/types.js";
import type { TraceHeaders } from "../tracing/decision-tracer.js";

export type ClientAddressHeader = "X-Real-IP" | "X-Forwarded-For";

/** W3C trace context: what every adapter reads as the span's parent. */
const W3C_HEADERS = ["traceparent", "tracestate"];

/** B3, single and multi-header: what Envoy and Istio send with Zipkin tracing; the Envoy adapters add them. */
export const B3_HEADERS = ["b3", "x-b3-traceid", "x-b3-spanid", "x-b3-parentspanid", "x-b3-sampled", "x-b3-flags"];

/** Every trace-context header name (lower-case), as the tracer's propagators ask for them. */
export const CONTEXT_HEADERS = [...W3C_HEADERS, ...B3_HEADERS];

/** The headers read for every request trace (besides the adapter's client address header and B3 for Envoy). */
export const TRACE_HEADERS = ["X-Request-Id", ...W3C_HEADERS];

/**
 * The trace-context headers among `seen` (which holds only those the adapter reads for its gateway family), every
 * value kept so that the tracer can refuse a repeated one; undefined when there are none.
 */
export function traceContext(seen: ReadonlyMap<string, readonly string[]>): TraceHeaders | undefined {
  let out: Map<string, readonly string[]> | undefined;
  for (const name of CONTEXT_HEADERS) {
    const values = seen.get(name);
    if (values !== undefined) (out ??= new Map()).set(name, values);
  }
  return out;
}

/** Where each adapter finds the client address its gateway reports. */
export const CLIENT_ADDRESS_HEADER: Record<"nginx" | "caddy" | "traefik" | "envoy", ClientAddressHeader> = {
  nginx: "X-Real-IP",
  caddy: "X-Forwarded-For",
  traefik: "X-Forwarded-For",
  envoy: "X-Forwarded-For",
};

const MAX_TRACE_CHARS = 128;

function printable(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const v = value
    .trim()
    .slice(0, MAX_TRACE_CHARS)
    .replace(/[^\x21-\x7e]/g, "?");
  return v === "" ? undefined : v;
}

/**
 * The trace of a request whose headers are `seen` (every value of each name of TRACE_HEADERS and `address`, keyed
 * by the name as written there), or undefined when it carries none.
 */
export function requestTrace(
  seen: ReadonlyMap<string, string[]>,
  address: ClientAddressHeader | undefined,
): RequestTrace | undefined {
  const requestId = printable(seen.get("X-Request-Id")?.at(-1));
  const tp = seen.get("traceparent")?.at(-1)?.trim().toLowerCase();
  const traceparent = tp !== undefined && parseTraceparent(tp) ? tp : undefined;
  const clientAddress = address === undefined ? undefined : printable(seen.get(address)?.join(",").split(",").at(-1));
  const headers = traceContext(seen);
  if (requestId === undefined && traceparent === undefined && clientAddress === undefined && headers === undefined)
    return undefined;
  return {
    ...(requestId !== undefined ? { requestId } : {}),
    ...(traceparent !== undefined ? { traceparent } : {}),
    ...(clientAddress !== undefined ? { clientAddress } : {}),
    ...(headers !== undefined ? { headers } : {}),
  };
}
