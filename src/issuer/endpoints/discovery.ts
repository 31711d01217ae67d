/**
 * GET /.well-known/openid-configuration and its jwks_uri: the issuer metadata and the public signing
 * keys (current and previous).
 */
import type { RequestHandler } from "express";
import { PATHS, endpointUrl, type IssuerContext } from "../context.js";
import { supportedScopes } from "../token-shape.js";
import { SIGNING_ALG } from "../keys.js";

export function discoveryEndpoint(ctx: IssuerContext): RequestHandler {
  const shape = ctx.config.tokenShape;
  return (_req, res) => {
    res.set("Cache-Control", "no-cache").json({
      issuer: ctx.config.issuerUrl,
      authorization_endpoint: endpointUrl(ctx, PATHS.authorize),
      token_endpoint: endpointUrl(ctx, PATHS.token),
      userinfo_endpoint: endpointUrl(ctx, PATHS.userinfo),
      jwks_uri: endpointUrl(ctx, PATHS.jwks),
      scopes_supported: supportedScopes(shape),
      response_types_supported: ["code"],
      response_modes_supported: ["query"],
      grant_types_supported: ["authorization_code", "client_credentials"],
      subject_types_supported: ["public"],
      id_token_signing_alg_values_supported: [SIGNING_ALG],
      token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post", "none"],
      code_challenge_methods_supported: ["S256"],
      claims_supported: [
        "sub",
        "iss",
        "aud",
        "exp",
        "iat",
        "auth_time",
        "nonce",
        "at_hash",
        "s_hash",
        "sid",
        "idp",
        ...(shape.tenantClaim !== null ? [shape.tenantClaim] : []),
        ...(shape.subjectClaim !== "sub" ? [shape.subjectClaim] : []),
        "amr",
        "preferred_username",
        "name",
        "given_name",
        "family_name",
        "email",
        "email_verified",
      ],
      claims_parameter_supported: false,
      request_parameter_supported: false,
      request_uri_parameter_supported: false,
      authorization_response_iss_parameter_supported: true,
    });
  };
}

export function jwksEndpoint(ctx: IssuerContext): RequestHandler {
  return (_req, res) => {
    res.set("Cache-Control", "no-cache").json(ctx.keys.jwks());
  };
}
