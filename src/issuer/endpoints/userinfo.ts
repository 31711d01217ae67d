/**
 * GET/POST /connect/userinfo: verifies the Bearer access token with the issuer's own published keys and
 * returns the spec 2.4 object, fields filtered by the granted scopes. Errors follow RFC 6750 3.1.
 */
import type { RequestHandler } from "express";
import { createLocalJWKSet, jwtVerify } from "jose";
import { bearerToken } from "../../auth/index.js";
import type { IssuerContext } from "../context.js";
import { SIGNING_ALG } from "../keys.js";
import { OAuthError } from "../oauth-error.js";
import type { IssuerUser } from "../sample-data.js";

/** Spec 2.4 fields released by each scope. */
const FIELDS_BY_SCOPE: Record<string, ReadonlyArray<keyof IssuerUser>> = {
  openid: ["sub"],
  profile: ["preferred_username", "family_name", "given_name", "name"],
  email: ["email", "email_verified"],
};

export function userinfoEndpoint(ctx: IssuerContext): RequestHandler {
  return async (req, res) => {
    res.set({ "Cache-Control": "no-store", Pragma: "no-cache" });
    try {
      const token = requireBearerToken(req.headers.authorization);
      const { sub, scope } = await verifyUserAccessToken(ctx, token);
      const user = ctx.usersBySub.get(sub);
      if (!user) throw invalidToken("the token's user no longer exists");
      const body: Record<string, unknown> = {};
      for (const s of scope) for (const field of FIELDS_BY_SCOPE[s] ?? []) body[field] = user[field];
      res.json(body);
    } catch (err) {
      if (!(err instanceof OAuthError)) throw err;
      res.status(err.status).set(err.headers).json(err.toJSON());
    }
  };
}

function requireBearerToken(header: string | undefined): string {
  const { token } = bearerToken(header);
  if (token === undefined) {
    // RFC 6750 3.1: no error code when the request carries no token at all.
    throw new OAuthError("invalid_request", "a Bearer access token is required", 401, {
      "WWW-Authenticate": 'Bearer realm="portier-issuer"',
    });
  }
  return token;
}

async function verifyUserAccessToken(ctx: IssuerContext, token: string): Promise<{ sub: string; scope: string[] }> {
  let payload;
  try {
    ({ payload } = await jwtVerify(token, createLocalJWKSet(ctx.keys.jwks()), {
      issuer: ctx.config.issuerUrl,
      algorithms: [SIGNING_ALG],
      typ: "at+jwt",
      currentDate: new Date(ctx.config.now() * 1000),
    }));
  } catch {
    throw invalidToken("the access token is invalid or expired");
  }
  if (typeof payload.jti === "string" && ctx.grants.isRevoked(payload.jti))
    throw invalidToken("the access token was revoked");
  const scope = Array.isArray(payload["scope"])
    ? (payload["scope"] as unknown[]).filter((s): s is string => typeof s === "string")
    : [];
  const sub = payload[ctx.config.tokenShape.subjectClaim];
  if (typeof sub !== "string" || !scope.includes("openid")) {
    throw new OAuthError("insufficient_scope", "userinfo needs a user access token with scope openid", 403, {
      "WWW-Authenticate": 'Bearer realm="portier-issuer", error="insufficient_scope", scope="openid"',
    });
  }
  return { sub, scope };
}

function invalidToken(description: string): OAuthError {
  return new OAuthError("invalid_token", description, 401, {
    "WWW-Authenticate": `Bearer realm="portier-issuer", error="invalid_token", error_description="${description}"`,
  });
}
