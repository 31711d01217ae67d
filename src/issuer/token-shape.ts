/**
 * The shape of the tokens the issuer mints for a project (data/project.json): which claims name the user and the
 * tenant, the scope a user token carries, the audience and scope of an application token; and which of those API
 * scopes a registered client may be granted. The spec's shape by default.
 */
import type { GrantType, IssuerClient } from "./sample-data.js";

/** The scope a clients file names for "the API's scope": the spec's, granted as the project's own scopes. */
export const API_SCOPE_IN_CLIENTS_FILE = "apiclients";

export interface IssuerTokenShape {
  /** The access token claim holding the user's id (the ID token always carries `sub` as well, per OIDC). */
  readonly subjectClaim: string;
  /** The claim holding the tenant of the user or machine client; null: tokens carry no tenant. */
  readonly tenantClaim: string | null;
  /** The scope a user (authorization code) token may carry besides openid, profile, email; null: none. */
  readonly userScope: string | null;
  /** The aud of an application (client-credentials) token; null: none. */
  readonly applicationAudience: string | null;
  /** The scope of an application token; null: none. */
  readonly applicationScope: string | null;
}

/** The spec's: sub, tenant_id, and apiclients as user scope, application audience and application scope. */
export const SPEC_ISSUER_TOKEN_SHAPE: IssuerTokenShape = Object.freeze({
  subjectClaim: "sub",
  tenantClaim: "tenant_id",
  userScope: "apiclients",
  applicationAudience: "apiclients",
  applicationScope: "apiclients",
});

/** The OpenID Connect scopes every sign-in may ask for, before the project's own. */
export const OIDC_SCOPES = ["openid", "profile", "email"] as const;

/** The scopes the issuer knows: the OIDC ones and the project's API scopes. */
export function supportedScopes(shape: IssuerTokenShape): string[] {
  return [...new Set([...OIDC_SCOPES, shape.userScope, shape.applicationScope].filter((s) => s !== null))];
}

/**
 * The scopes a client may be granted by a grant: the OIDC scopes it lists (authorization code), and the project's
 * API scope of that grant when it lists `apiclients` (the clients file's name for the API's scope).
 */
export function grantableScopes(client: IssuerClient, grant: GrantType, shape: IssuerTokenShape): string[] {
  const oidc = grant === "authorization_code" ? OIDC_SCOPES.filter((s) => client.scopes.includes(s)) : [];
  const api = grant === "authorization_code" ? shape.userScope : shape.applicationScope;
  return api !== null && client.scopes.includes(API_SCOPE_IN_CLIENTS_FILE) ? [...oidc, api] : oidc;
}

/** The claim holding a tenant, as an object to spread into a token's payload (empty without tenant). */
export function tenantClaims(shape: IssuerTokenShape, tenant: string | undefined): Record<string, string> {
  return shape.tenantClaim !== null && tenant !== undefined ? { [shape.tenantClaim]: tenant } : {};
}
