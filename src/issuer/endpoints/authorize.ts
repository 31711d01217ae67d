/**
 * GET /connect/authorize and POST /connect/login: validates the authorization request (RFC 6749 4.1.1,
 * PKCE S256 required), signs the user in (login form, or login_hint in dev mode) and redirects back with a
 * code. Errors go back to the client when its redirect URI is valid, otherwise a 400 page (4.1.2.1).
 */
import type { RequestHandler, Response } from "express";
import { constantTimeEqual } from "../constant-time.js";
import { PATHS, endpointUrl, type IssuerContext } from "../context.js";
import { randomToken, type AuthorizationRequest } from "../grant-store.js";
import { sendErrorPage, sendLoginPage } from "../login-page.js";
import { OAuthError } from "../oauth-error.js";
import { singleValued, splitScope } from "../params.js";
import type { IssuerClient, IssuerUser } from "../sample-data.js";
import { grantableScopes, type IssuerTokenShape } from "../token-shape.js";

const CODE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** An error that cannot be redirected (no valid client or redirect URI): shown as a page. */
export class PageError extends OAuthError {}

export function authorizeEndpoint(ctx: IssuerContext): RequestHandler {
  return (req, res) => {
    let target: RedirectTarget | undefined;
    try {
      const raw = req.query as Record<string, unknown>;
      target = redirectTarget(ctx, raw);
      const params = singleValued(raw, "query string");
      const request = validateRequest(params, target, ctx.config.tokenShape);
      const loginHint = params["login_hint"];

      if (ctx.config.devMode && loginHint !== undefined) {
        const user = ctx.usersByName.get(loginHint) ?? ctx.usersBySub.get(loginHint);
        if (!user) throw new OAuthError("access_denied", "login_hint does not name a sample user");
        return redirectWithCode(ctx, res, request, user);
      }
      if (params["prompt"]?.split(" ").includes("none"))
        throw new OAuthError("login_required", "no session at this issuer; interactive login needed");
      const requestId = ctx.grants.addPendingLogin(request);
      sendLoginPage(res, 200, {
        ...loginForm(ctx, requestId, request.clientId),
        ...(loginHint !== undefined ? { username: loginHint } : {}),
      });
    } catch (err) {
      if (err instanceof PageError) return sendErrorPage(res, 400, err.error, err.description);
      if (err instanceof OAuthError && target) return redirectWithError(ctx, res, target, err);
      throw err;
    }
  };
}

/** The login page's form for one pending sign-in: where it posts, the sample users, the dev-mode buttons. */
function loginForm(ctx: IssuerContext, requestId: string, clientId: string) {
  return {
    requestId,
    clientId,
    loginAction: endpointUrl(ctx, PATHS.login),
    users: ctx.users,
    oneClick: ctx.config.devMode,
    ...(ctx.samplePasswordHint ? { passwordHint: ctx.samplePasswordHint } : {}),
  };
}

export function loginEndpoint(ctx: IssuerContext): RequestHandler {
  return (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const field = (name: string) => (typeof body[name] === "string" ? body[name] : "");
    const requestId = field("request_id");
    const request = requestId ? ctx.grants.pendingLogin(requestId) : undefined;
    if (!request)
      return sendErrorPage(
        res,
        400,
        "invalid_request",
        "this sign-in request is unknown or has expired; start again from the application",
      );

    // Dev mode only: the login page's one-click buttons post login_hint (the same shortcut as on /connect/authorize).
    const hint = ctx.config.devMode ? field("login_hint") : "";
    const username = hint || field("username");
    const user = ctx.usersByName.get(username);
    if (!user || (!hint && !constantTimeEqual(field("password"), user.password))) {
      ctx.logger.info({ event: "login_failed", client_id: request.clientId }, "sign-in refused");
      return sendLoginPage(res, 401, {
        ...loginForm(ctx, requestId, request.clientId),
        username,
        error: "Unknown username or wrong password.",
      });
    }
    ctx.grants.completeLogin(requestId);
    redirectWithCode(ctx, res, request, user, 303);
  };
}

interface RedirectTarget {
  client: IssuerClient;
  redirectUri: string;
  state?: string;
}

/** client_id and redirect_uri first: until both are valid nothing may be redirected. */
function redirectTarget(ctx: IssuerContext, raw: Record<string, unknown>): RedirectTarget {
  const clientId = raw["client_id"];
  const redirectUri = raw["redirect_uri"];
  if (typeof clientId !== "string" || !clientId)
    throw new PageError("invalid_request", "client_id is missing or repeated");
  const client = ctx.clients.get(clientId);
  if (!client) throw new PageError("invalid_client", "unknown client_id");
  if (typeof redirectUri !== "string" || !redirectUri)
    throw new PageError("invalid_request", "redirect_uri is missing or repeated");
  const registered = client.redirect_uris ?? [];
  const matches =
    registered.includes(redirectUri) ||
    (ctx.config.devMode && registered.some((r) => sameLoopbackUriAnyPort(r, redirectUri)));
  if (!matches) throw new PageError("invalid_request", "redirect_uri is not registered for this client (exact match)");
  const state = raw["state"];
  return { client, redirectUri, ...(typeof state === "string" && state ? { state } : {}) };
}

/**
 * RFC 8252 7.3, dev mode only: a registered loopback IP redirect URI (http://127.0.0.1 or http://[::1])
 * matches the same URI on any port, so `portier dev --callback-port 0` works. Everything else stays exact.
 */
function sameLoopbackUriAnyPort(registered: string, requested: string): boolean {
  let a: URL, b: URL;
  try {
    a = new URL(registered);
    b = new URL(requested);
  } catch {
    return false;
  }
  const loopback = (u: URL) =>
    u.protocol === "http:" && (u.hostname === "127.0.0.1" || u.hostname === "[::1]") && !u.username && !u.password;
  // Only a requested URI already in canonical form, so the comparison below is on exactly what was sent.
  if (!loopback(a) || !loopback(b) || b.href !== requested) return false;
  b.port = a.port;
  return a.href === b.href;
}

function validateRequest(
  params: Record<string, string>,
  { client, redirectUri }: RedirectTarget,
  shape: IssuerTokenShape,
): AuthorizationRequest {
  const responseType = params["response_type"];
  if (!responseType) throw new OAuthError("invalid_request", "response_type is required");
  if (responseType !== "code")
    throw new OAuthError("unsupported_response_type", "only response_type=code is supported");
  if (params["response_mode"] !== undefined && params["response_mode"] !== "query")
    throw new OAuthError("invalid_request", "only response_mode=query is supported");
  if (params["request"] !== undefined || params["request_uri"] !== undefined)
    throw new OAuthError("invalid_request", "request objects are not supported");
  if (!client.grant_types.includes("authorization_code"))
    throw new OAuthError("unauthorized_client", "this client may not use the authorization code flow");

  const scope = splitScope(params["scope"]);
  if (!scope.length) throw new OAuthError("invalid_scope", "scope is required");
  const grantable = grantableScopes(client, "authorization_code", shape);
  const refused = scope.filter((s) => !grantable.includes(s));
  if (refused.length) throw new OAuthError("invalid_scope", `scope not allowed for this client: ${refused.join(" ")}`);

  const challenge = params["code_challenge"];
  if (!challenge) throw new OAuthError("invalid_request", "code_challenge is required (PKCE)");
  if (params["code_challenge_method"] !== "S256")
    throw new OAuthError("invalid_request", "code_challenge_method must be S256");
  if (!CODE_CHALLENGE.test(challenge))
    throw new OAuthError("invalid_request", "code_challenge must be a base64url SHA-256 value (43 characters)");

  const state = params["state"];
  const nonce = params["nonce"];
  return {
    clientId: client.client_id,
    redirectUri,
    scope,
    codeChallenge: challenge,
    ...(state !== undefined ? { state } : {}),
    ...(nonce !== undefined ? { nonce } : {}),
  };
}

function redirectWithCode(
  ctx: IssuerContext,
  res: Response,
  request: AuthorizationRequest,
  user: IssuerUser,
  status = 302,
): void {
  const authTime = ctx.config.now();
  const code = ctx.grants.issueCode(request, user, authTime, randomToken(16));
  ctx.logger.info({ event: "code_issued", client_id: request.clientId, sub: user.sub }, "authorization code issued");
  const url = new URL(request.redirectUri);
  url.searchParams.set("code", code);
  if (request.state !== undefined) url.searchParams.set("state", request.state);
  url.searchParams.set("iss", ctx.config.issuerUrl);
  res.set("Cache-Control", "no-store").redirect(status, url.href);
}

function redirectWithError(ctx: IssuerContext, res: Response, target: RedirectTarget, err: OAuthError): void {
  ctx.logger.info({ event: "authorize_error", error: err.error }, "authorization request refused");
  const url = new URL(target.redirectUri);
  url.searchParams.set("error", err.error);
  url.searchParams.set("error_description", err.description);
  if (target.state !== undefined) url.searchParams.set("state", target.state);
  url.searchParams.set("iss", ctx.config.issuerUrl);
  res.set("Cache-Control", "no-store").redirect(302, url.href);
}
