/**
 * Tokens for the end-to-end tests, obtained from the running local issuer with a real relying-party
 * library (openid-client v6): the application flow (client credentials) and the accessCode flow
 * (authorization code + PKCE, signed in without a form through the issuer's dev-mode login_hint).
 */
import * as oidc from "openid-client";

export { TENANT_A, TENANT_B, MACHINE_CLIENT } from "../../support/sample.js";
import { TENANT_A, TENANT_B, WEB_CLIENT, REDIRECT_URI, MACHINE_CLIENT, MACHINE_SECRET } from "../../support/sample.js";

/** Sample users of data/sample/users.json used here, with their fixed subs. */
export const USERS = {
  "enseignant.jeune": { sub: "5db8efe5-c2dc-4aa9-90dc-1f8d12487df3", tenant: TENANT_A, roles: ["enseignant_jeune"] },
  "eleve.adulte": { sub: "1cfaeca2-7153-4bb3-a728-ab0f9b13c638", tenant: TENANT_A, roles: ["eleve_adulte"] },
  "synced.sans.role": { sub: "79485006-53eb-402b-ae1e-91689f89727d", tenant: TENANT_A, roles: [] },
  "non.synchronise": { sub: "8819c28d-9d4b-47da-aeac-a1ca0ccd1005", tenant: TENANT_A, roles: [] },
  "enseignant.jeune.b": { sub: "cd8d408e-5e0a-4aa3-b5d8-965d2fd18be4", tenant: TENANT_B, roles: ["enseignant_jeune"] },
} as const;
export type Username = keyof typeof USERS;

const insecure = { execute: [oidc.allowInsecureRequests] };

/** An application-flow token (client credentials); the sample machine client of tenant A unless told. */
export async function machineToken(
  issuerUrl: string,
  clientId = MACHINE_CLIENT,
  secret = MACHINE_SECRET,
): Promise<string> {
  const config = await oidc.discovery(new URL(issuerUrl), clientId, undefined, oidc.ClientSecretPost(secret), insecure);
  const tokens = await oidc.clientCredentialsGrant(config, { scope: "apiclients" });
  return tokens.access_token;
}

export async function userToken(
  issuerUrl: string,
  username: string,
): Promise<{ accessToken: string; sub: string | undefined }> {
  const config = await oidc.discovery(new URL(issuerUrl), WEB_CLIENT, undefined, oidc.None(), insecure);
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const scope = "openid profile email apiclients";
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT_URI,
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    login_hint: username,
    state,
    nonce,
  });
  const res = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(10_000) });
  const location = res.headers.get("location");
  if (res.status !== 302 || !location)
    throw new Error(`authorize for ${username}: expected a 302 to the callback, got ${res.status}`);
  const tokens = await oidc.authorizationCodeGrant(
    config,
    new URL(location),
    { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true },
    { scope },
  );
  return { accessToken: tokens.access_token, sub: tokens.claims()?.sub };
}
