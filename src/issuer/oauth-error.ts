/**
 * OAuth 2.0 protocol errors (RFC 6749 4.1.2.1 and 5.2, RFC 6750 3.1) as one exception type that the
 * handlers throw and the endpoints turn into the right status, body and headers.
 */
import { PortierError } from "../errors/portier-error.js";

const OAUTH_ERROR_CODES = [
  "invalid_request",
  "invalid_client",
  "invalid_grant",
  "unauthorized_client",
  "unsupported_grant_type",
  "invalid_scope",
  "unsupported_response_type",
  "access_denied",
  "login_required",
  "server_error",
  "invalid_token",
  "insufficient_scope",
] as const;

export type OAuthErrorCode = (typeof OAUTH_ERROR_CODES)[number];

export class OAuthError extends PortierError {
  static override readonly code = "oauth_error";
  static override get codes(): readonly OAuthErrorCode[] {
    return OAUTH_ERROR_CODES;
  }
  declare readonly code: OAuthErrorCode;

  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    /** HTTP status for direct responses (token, userinfo). */
    readonly status = 400,
    /** Extra response headers (WWW-Authenticate). */
    readonly headers: Record<string, string> = {},
  ) {
    super(`${error}: ${description}`, { code: error });
  }

  toJSON(): { error: string; error_description: string } {
    return { error: this.error, error_description: this.description };
  }
}
