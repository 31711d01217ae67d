/**
 * The credentials rule every adapter applies to the Authorization header values a gateway passed on: exactly one
 * Bearer credential, or the request is token_malformed.
 */
import { bearerToken } from "../../auth/index.js";
import type { DecisionRequest } from "../decide/types.js";

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
