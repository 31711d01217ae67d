/**
 * Test helpers for token verification: the test signer (../support/tokens.ts), claims of both flows, and a
 * loopback issuer serving discovery + JWKS.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
export { makeKey, sign, signRaw, type TestKey } from "../support/tokens.js";
import type { TestKey } from "../support/tokens.js";
import { KEY_STORE, type PortierAccessTokenVerifier } from "../../src/auth/create-access-token-verifier.js";

export interface TestIssuer {
  url: string;
  jwksHits: number;
  discoveryHits: number;
  keys: TestKey[];
  down: boolean;
  close(): Promise<void>;
}

/** Discovery + JWKS on 127.0.0.1:0; `keys` and `down` can be changed while it runs. */
export async function startIssuer(keys: TestKey[]): Promise<TestIssuer> {
  const state: TestIssuer = { url: "", jwksHits: 0, discoveryHits: 0, keys, down: false, close: async () => {} };
  const server: Server = createServer((req, res) => {
    if (state.down) {
      res.writeHead(503).end();
      return;
    }
    if (req.url === "/.well-known/openid-configuration") {
      state.discoveryHits++;
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ issuer: state.url, jwks_uri: `${state.url}/jwks` }));
    } else if (req.url === "/jwks") {
      state.jwksHits++;
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ keys: state.keys.map((k) => k.publicJwk) }));
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () => new Promise<void>((r) => server.close(() => r()));
  return state;
}

export const NOW = 1_800_000_000;
export const TENANT = "5b0e6f3c-8f0a-4c43-9a56-6f0c2d2b9e11";
export const USER = "0f8fad5b-d9cb-469f-a165-70867728950e";

/** Spec 2.2: accessCode flow access token (plus extras a real IdentityServer adds). */
export function userClaims(iss: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    iss,
    exp: NOW + 3600,
    nbf: NOW - 5,
    iat: NOW - 5,
    client_id: "webapp",
    sub: USER,
    auth_time: NOW - 60,
    idp: "local",
    tenant_id: TENANT,
    scope: ["openid", "email", "profile", "apiclients"],
    amr: ["pwd"],
    jti: "j1",
    sid: "s1",
    aud: "apiclients",
    ...extra,
  };
}

/** Spec 2.3: application (client credentials) flow access token. */
export function appClaims(iss: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    iss,
    nbf: NOW - 5,
    exp: NOW + 3600,
    aud: "apiclients",
    client_id: "batch",
    tenant_id: TENANT,
    scope: "apiclients",
    ...extra,
  };
}

/** Fetches the verifier's key set now, regardless of cooldown (what its refresh timer does). */
export function refreshKeys(v: PortierAccessTokenVerifier): Promise<void> {
  return v[KEY_STORE].refresh();
}
