/**
 * Mints the three token shapes of spec 2.1-2.3 (ID token, user access token, application access token)
 * with at_hash / s_hash binding the ID token to its access token and state, in the project's token shape (the
 * claims naming the user and the tenant, the application audience).
 */
import { randomUUID } from "node:crypto";
import { SignJWT } from "jose";
import { halfHash } from "../auth/index.js";
import type { KeyRing } from "./keys.js";
import { SIGNING_ALG } from "./keys.js";
import type { IssuerClient, IssuerUser } from "./sample-data.js";
import { tenantClaims, type IssuerTokenShape } from "./token-shape.js";

export interface UserGrant {
  user: IssuerUser;
  clientId: string;
  scope: string[];
  authTime: number;
  sid: string;
  nonce?: string;
  state?: string;
}

export interface TokenFactory {
  /** Spec 2.2 access token; returns the token and its jti. */
  userAccessToken(grant: UserGrant): Promise<{ token: string; jti: string }>;
  /** Spec 2.1 ID token, bound to the access token (at_hash) and the state (s_hash). */
  idToken(grant: UserGrant, accessToken: string): Promise<string>;
  /** Spec 2.3 access token of the `application` flow. */
  applicationAccessToken(client: IssuerClient, scope: string[]): Promise<{ token: string; jti: string }>;
}

export interface TokenFactoryConfig {
  issuerUrl: string;
  accessTtlSec: number;
  idTtlSec: number;
  now: () => number;
  keys: KeyRing;
  shape: IssuerTokenShape;
}

export function createTokenFactory(config: TokenFactoryConfig): TokenFactory {
  const sign = (payload: Record<string, unknown>, typ: string) => {
    const { kid, privateKey } = config.keys.current();
    return new SignJWT(payload).setProtectedHeader({ alg: SIGNING_ALG, kid, typ }).sign(privateKey);
  };

  return {
    async userAccessToken(grant) {
      const iat = config.now();
      const jti = randomUUID();
      const token = await sign(
        {
          exp: iat + config.accessTtlSec,
          iss: config.issuerUrl,
          client_id: grant.clientId,
          [config.shape.subjectClaim]: grant.user.sub,
          auth_time: grant.authTime,
          idp: grant.user.idp,
          ...tenantClaims(config.shape, grant.user.tenant_id),
          scope: [...grant.scope],
          amr: [...grant.user.amr],
          iat,
          jti,
        },
        "at+jwt",
      );
      return { token, jti };
    },

    async idToken(grant, accessToken) {
      const iat = config.now();
      const payload: Record<string, unknown> = {
        exp: iat + config.idTtlSec,
        iss: config.issuerUrl,
        aud: grant.clientId,
        iat,
        at_hash: halfHash(accessToken, SIGNING_ALG),
        ...(grant.state !== undefined ? { s_hash: halfHash(grant.state, SIGNING_ALG) } : {}),
        sid: grant.sid,
        // OIDC requires sub in an ID token; a project naming its user otherwise gets that claim as well.
        sub: grant.user.sub,
        [config.shape.subjectClaim]: grant.user.sub,
        auth_time: grant.authTime,
        idp: grant.user.idp,
        ...tenantClaims(config.shape, grant.user.tenant_id),
        // Spec 2.1 types amr as a string in the ID token: the methods joined by a space.
        amr: grant.user.amr.join(" "),
        ...(grant.nonce !== undefined ? { nonce: grant.nonce } : {}),
      };
      return sign(payload, "JWT");
    },

    async applicationAccessToken(client, scope) {
      const iat = config.now();
      const jti = randomUUID();
      const token = await sign(
        {
          nbf: iat,
          exp: iat + config.accessTtlSec,
          iss: config.issuerUrl,
          ...(config.shape.applicationAudience !== null ? { aud: config.shape.applicationAudience } : {}),
          client_id: client.client_id,
          ...tenantClaims(config.shape, client.tenant_id),
          scope: [...scope],
          iat,
          jti,
        },
        "at+jwt",
      );
      return { token, jti };
    },
  };
}
