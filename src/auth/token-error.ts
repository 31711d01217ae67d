/**
 * TokenError: the one error every token rejection becomes, with a stable code, plus the RFC 6750
 * WWW-Authenticate value the service sends with the 401. Messages never contain token text.
 */
import { PortierError } from "../errors/portier-error.js";
import type { TokenErrorCode } from "./types.js";

/** Every TokenErrorCode at run time; `satisfies` makes the compiler refuse a missing or unknown one. */
const TOKEN_ERROR_CODES = Object.keys({
  token_missing: 1,
  token_malformed: 1,
  token_too_large: 1,
  alg_not_allowed: 1,
  kid_unknown: 1,
  signature_invalid: 1,
  issuer_mismatch: 1,
  audience_mismatch: 1,
  token_expired: 1,
  token_not_yet_valid: 1,
  typ_invalid: 1,
  id_token_not_accepted: 1,
  claims_invalid: 1,
  crit_unsupported: 1,
  keys_unavailable: 1,
  nonce_mismatch: 1,
  at_hash_mismatch: 1,
  s_hash_mismatch: 1,
} satisfies Record<TokenErrorCode, 1>) as TokenErrorCode[];

export class TokenError extends PortierError {
  static override readonly code = "token_invalid";
  static override get codes(): readonly TokenErrorCode[] {
    return TOKEN_ERROR_CODES;
  }
  declare readonly code: TokenErrorCode;
  constructor(code: TokenErrorCode, message: string) {
    super(message, { code });
  }
}

/** RFC 6750 3: `Bearer error="invalid_token", error_description="..."`; bare `Bearer` when no token was sent (3.1). */
export function wwwAuthenticate(err: TokenError): string {
  if (err.code === "token_missing") return "Bearer";
  // error_description is limited to %x20-21 / %x23-5B / %x5D-7E; escape quotes/backslashes and drop the rest.
  const description = `${err.code}: ${err.message}`.replace(/[^\x20-\x7e]/g, " ").replace(/["\\]/g, (c) => `\\${c}`);
  return `Bearer error="invalid_token", error_description="${description}"`;
}
