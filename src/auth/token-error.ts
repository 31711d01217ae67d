/**
 * TokenError: the one error every token rejection becomes, with a stable code, plus the RFC 6750
 * WWW-Authenticate value the service sends with the 401. Messages never contain token text.
 */
import type { TokenErrorCode } from "./types.js";

export class TokenError extends Error {
  readonly code: TokenErrorCode;
  constructor(code: TokenErrorCode, message: string) {
    super(message);
    this.name = "TokenError";
    this.code = code;
  }
}

/** RFC 6750 3: `Bearer error="invalid_token", error_description="..."`; bare `Bearer` when no token was sent (3.1). */
export function wwwAuthenticate(err: TokenError): string {
  if (err.code === "token_missing") return "Bearer";
  // error_description is limited to %x20-21 / %x23-5B / %x5D-7E; escape quotes/backslashes and drop the rest.
  const description = `${err.code}: ${err.message}`
    .replace(/[^\x20-\x7e]/g, " ")
    .replace(/["\\]/g, (c) => `\\${c}`);
  return `Bearer error="invalid_token", error_description="${description}"`;
}
