/**
 * POST /connect/token: the `authorization_code` grant (PKCE S256 verifier checked, code single-use and bound
 * to client and redirect URI) and the `client_credentials` grant (the project's application scope). Parameters
 * come from the form body or the query string (spec 4.1); errors follow RFC 6749 5.2; responses are never cached.
 */
import { createHash } from "node:crypto";
import type { RequestHandler, Response } from "express";
import { base64url } from "jose";
import { authenticateClient, type AuthenticatedClient } from "../client-auth.js";
import { constantTimeEqual } from "../constant-time.js";
import type { IssuerContext } from "../context.js";
import { OAuthError } from "../oauth-error.js";
import { grantableScopes } from "../token-shape.js";
import { splitScope, tokenRequestParams, type Params } from "../params.js";

const CODE_VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

interface TokenResponse {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  scope: string;
  id_token?: string;
}

type GrantHandler = (ctx: IssuerContext, params: Params, auth: AuthenticatedClient) => Promise<TokenResponse>;

/** The grants this endpoint serves, by grant_type. */
const GRANTS: Record<string, GrantHandler> = {
  authorization_code: authorizationCodeGrant,
  client_credentials: clientCredentialsGrant,
};

export function tokenEndpoint(ctx: IssuerContext): RequestHandler {
  return async (req, res) => {
    res.set({ "Cache-Control": "no-store", Pragma: "no-cache" });
    try {
      const params = tokenRequestParams(req);
      const grantType = params["grant_type"];
      if (!grantType) throw new OAuthError("invalid_request", "grant_type is required");
      const grant = Object.hasOwn(GRANTS, grantType) ? GRANTS[grantType] : undefined;
      if (!grant) throw new OAuthError("unsupported_grant_type", `grant_type ${grantType} is not supported`);
      const auth = authenticateClient(req, params, ctx.clients);
      if (!auth.client.grant_types.some((g) => g === grantType)) {
        throw new OAuthError("unauthorized_client", `this client may not use grant_type ${grantType}`);
      }
      const body = await grant(ctx, params, auth);
      ctx.logger.info(
        { event: "token_issued", grant_type: grantType, client_id: auth.client.client_id, scope: body.scope },
        "token issued",
      );
      res.status(200).json(body);
    } catch (err) {
      if (!(err instanceof OAuthError)) throw err;
      sendTokenError(ctx, res, err);
    }
  };
}

async function authorizationCodeGrant(
  ctx: IssuerContext,
  params: Params,
  { client }: AuthenticatedClient,
): Promise<TokenResponse> {
  const code = params["code"];
  const redirectUri = params["redirect_uri"];
  const verifier = params["code_verifier"];
  if (!code) throw new OAuthError("invalid_request", "code is required");
  if (!redirectUri) throw new OAuthError("invalid_request", "redirect_uri is required");
  if (!verifier) throw new OAuthError("invalid_request", "code_verifier is required (PKCE)");
  if (!CODE_VERIFIER.test(verifier))
    throw new OAuthError("invalid_request", "code_verifier must be 43-128 unreserved characters");

  const redemption = ctx.grants.redeem(code);
  if (redemption.kind === "replayed")
    throw new OAuthError("invalid_grant", "authorization code was already used; tokens issued from it are revoked");
  if (redemption.kind === "unknown") throw new OAuthError("invalid_grant", "authorization code is unknown");
  if (redemption.kind === "expired") throw new OAuthError("invalid_grant", "authorization code has expired");
  const record = redemption.record;
  if (record.clientId !== client.client_id)
    throw new OAuthError("invalid_grant", "authorization code was issued to another client");
  if (record.redirectUri !== redirectUri)
    throw new OAuthError("invalid_grant", "redirect_uri differs from the authorization request");
  if (
    !constantTimeEqual(base64url.encode(createHash("sha256").update(verifier, "ascii").digest()), record.codeChallenge)
  ) {
    throw new OAuthError("invalid_grant", "code_verifier does not match the code_challenge");
  }

  // The spec's token request repeats the scope; it may narrow, never widen, what was authorized.
  const requested = splitScope(params["scope"]);
  const wider = requested.filter((s) => !record.scope.includes(s));
  if (wider.length) throw new OAuthError("invalid_scope", `scope exceeds the authorized scope: ${wider.join(" ")}`);
  const scope = requested.length ? requested : record.scope;

  const grant = {
    user: record.user,
    clientId: client.client_id,
    scope,
    authTime: record.authTime,
    sid: record.sid,
    ...(record.nonce !== undefined ? { nonce: record.nonce } : {}),
    ...(record.state !== undefined ? { state: record.state } : {}),
  };
  const access = await ctx.tokens.userAccessToken(grant);
  ctx.grants.recordIssued(record, access.jti);
  const response: TokenResponse = {
    access_token: access.token,
    token_type: "Bearer",
    expires_in: ctx.config.accessTtlSec,
    scope: scope.join(" "),
  };
  if (scope.includes("openid")) response.id_token = await ctx.tokens.idToken(grant, access.token);
  return response;
}

async function clientCredentialsGrant(
  ctx: IssuerContext,
  params: Params,
  { client }: AuthenticatedClient,
): Promise<TokenResponse> {
  const grantable = grantableScopes(client, "client_credentials", ctx.config.tokenShape);
  const requested = splitScope(params["scope"]);
  const scope = requested.length ? requested : grantable;
  const refused = scope.filter((s) => !grantable.includes(s));
  if (refused.length)
    throw new OAuthError(
      "invalid_scope",
      grantable.length
        ? `only scope ${grantable.join(" ")} may be granted to this client, not: ${refused.join(" ")}`
        : `no scope may be granted to this client, not: ${refused.join(" ")}`,
    );
  const access = await ctx.tokens.applicationAccessToken(client, scope);
  return {
    access_token: access.token,
    token_type: "Bearer",
    expires_in: ctx.config.accessTtlSec,
    scope: scope.join(" "),
  };
}

function sendTokenError(ctx: IssuerContext, res: Response, err: OAuthError): void {
  ctx.logger.info({ event: "token_error", error: err.error }, "token request refused");
  res.status(err.status).set(err.headers).json(err.toJSON());
}
