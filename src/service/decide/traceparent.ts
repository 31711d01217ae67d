/**
 * The W3C trace context `traceparent` value (version-traceid-parentid-flags, lower-case hex), read in one place:
 * for the request trace the gateway adapters record (kept only when well-formed) and for the trace and span ids
 * of the decision-log event.
 */

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;

export interface Traceparent {
  traceId: string;
  /** The parent's span id. */
  spanId: string;
}

/** Its ids, or undefined when the value is not a well-formed traceparent. */
export function parseTraceparent(value: string): Traceparent | undefined {
  const m = TRACEPARENT.exec(value);
  return m ? { traceId: m[1]!, spanId: m[2]! } : undefined;
}
