/**
 * OAuth 2.0 protocol errors (RFC 6749 4.1.2.1 and 5.2, RFC 6750 3.1) as one exception type that the
 * handlers throw and the endpoints turn into the right status, body and headers.
 */
export type OAuthErrorCode =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "invalid_scope"
  | "unsupported_response_type"
  | "access_denied"
  | "login_required"
  | "server_error"
  | "invalid_token"
  | "insufficient_scope";

export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    /** HTTP status for direct responses (token, userinfo). */
    readonly status = 400,
    /** Extra response headers (WWW-Authenticate). */
    readonly headers: Record<string, string> = {},
  ) {
    super(`${error}: ${description}`);
    this.name = "OAuthError";
  }

  toJSON(): { error: string; error_description: string } {
    return { error: this.error, error_description: this.description };
  }
}
