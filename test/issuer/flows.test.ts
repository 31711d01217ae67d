/**
 * Both spec flows end to end with a real relying-party library (openid-client v6) against the issuer on
 * loopback: discovery, authorization code + PKCE, client credentials, userinfo; every claim of 2.1-2.4.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as oidc from "openid-client";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { startIssuer, type RunningIssuer } from "../../src/issuer/index.js";
import {
  MACHINE_CLIENT,
  MACHINE_SECRET,
  REDIRECT_URI,
  TENANT_A,
  TENANT_B,
  TEACHER,
  UUID,
  WEB_CLIENT,
  decode,
  expectedHalfHash,
} from "./helpers.js";

const insecure = { execute: [oidc.allowInsecureRequests] };
let running: RunningIssuer;

beforeAll(async () => {
  running = await startIssuer({ host: "127.0.0.1", port: 0 });
});
afterAll(async () => {
  await running.close();
});

async function userFlow(scope: string, withState = true) {
  const config = await oidc.discovery(new URL(running.url), WEB_CLIENT, undefined, oidc.None(), insecure);
  const verifier = oidc.randomPKCECodeVerifier();
  const state = withState ? oidc.randomState() : undefined;
  const openid = scope.split(" ").includes("openid");
  const nonce = openid ? oidc.randomNonce() : undefined;
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT_URI,
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    login_hint: TEACHER.username,
    ...(nonce ? { nonce } : {}),
    ...(state ? { state } : {}),
  });
  const started = Math.floor(Date.now() / 1000);
  const res = await fetch(url, { redirect: "manual" });
  expect(res.status).toBe(302);
  const callback = new URL(res.headers.get("location")!);
  expect(callback.origin + callback.pathname).toBe(REDIRECT_URI);
  const tokens = await oidc.authorizationCodeGrant(
    config,
    callback,
    {
      pkceCodeVerifier: verifier,
      expectedState: state ?? oidc.skipStateCheck,
      idTokenExpected: openid,
      ...(nonce ? { expectedNonce: nonce } : {}),
    },
    { scope }, // the spec's token request repeats the scope
  );
  return { config, tokens, state, nonce, started };
}

describe("discovery", () => {
  it("publishes the spec 4.1 endpoints, S256 PKCE and an RS256 JWKS with kid/use/alg", async () => {
    const config = await oidc.discovery(new URL(running.url), WEB_CLIENT, undefined, oidc.None(), insecure);
    const meta = config.serverMetadata();
    expect(meta.issuer).toBe(running.url);
    expect(meta.authorization_endpoint).toBe(`${running.url}/connect/authorize`);
    expect(meta.token_endpoint).toBe(`${running.url}/connect/token`);
    expect(meta.userinfo_endpoint).toBe(`${running.url}/connect/userinfo`);
    expect(meta.code_challenge_methods_supported).toEqual(["S256"]);
    expect(meta.token_endpoint_auth_methods_supported).toEqual(
      expect.arrayContaining(["client_secret_basic", "client_secret_post"]),
    );
    const jwks = (await (await fetch(meta.jwks_uri!)).json()) as { keys: Array<Record<string, unknown>> };
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: "RSA", use: "sig", alg: "RS256", kid: expect.any(String) as unknown });
    expect(jwks.keys[0]).not.toHaveProperty("d");
  });
});

describe("flow accessCode (authorization code + PKCE)", () => {
  it("returns the spec token response", async () => {
    const { tokens } = await userFlow("openid profile email apiclients");
    expect(tokens.token_type.toLowerCase()).toBe("bearer");
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.scope).toBe("openid profile email apiclients");
    expect(typeof tokens.id_token).toBe("string");
  });

  it("issues an ID token with exactly the spec 2.1 claims plus nonce, at_hash and s_hash recomputed", async () => {
    const { tokens, state, nonce, started } = await userFlow("openid profile email apiclients");
    const { header, claims } = decode(tokens.id_token!);
    expect(header).toMatchObject({ alg: "RS256", kid: expect.any(String) as unknown });
    expect(Object.keys(claims).sort()).toEqual(
      [
        "exp",
        "iss",
        "aud",
        "iat",
        "at_hash",
        "s_hash",
        "sid",
        "sub",
        "auth_time",
        "idp",
        "tenant_id",
        "amr",
        "nonce",
      ].sort(),
    );
    expect(claims["iss"]).toBe(running.url);
    expect(claims["aud"]).toBe(WEB_CLIENT);
    expect(claims["sub"]).toBe(TEACHER.sub);
    expect(claims["sub"]).toMatch(UUID);
    expect(claims["tenant_id"]).toBe(TENANT_A);
    expect(claims["idp"]).toBe("local");
    expect(claims["amr"]).toBe("pwd");
    expect(claims["nonce"]).toBe(nonce);
    expect(typeof claims["sid"]).toBe("string");
    for (const t of ["iat", "auth_time"] as const) {
      expect(Number.isInteger(claims[t])).toBe(true);
      expect(claims[t] as number).toBeGreaterThanOrEqual(started - 1);
    }
    expect(claims["exp"]).toBe((claims["iat"] as number) + 300);
    expect(claims["at_hash"]).toBe(expectedHalfHash(tokens.access_token));
    expect(claims["s_hash"]).toBe(expectedHalfHash(state!));
    expect(tokens.claims()?.sub).toBe(TEACHER.sub); // what openid-client validated
  });

  it("omits s_hash when no state was sent", async () => {
    const { tokens } = await userFlow("openid", false);
    const { claims } = decode(tokens.id_token!);
    expect(claims).not.toHaveProperty("s_hash");
    expect(claims["at_hash"]).toBe(expectedHalfHash(tokens.access_token));
  });

  it("issues a spec 2.2 access token: typ at+jwt, scope and amr as arrays, no aud", async () => {
    const { tokens, started } = await userFlow("openid profile email apiclients");
    const { header, claims } = decode(tokens.access_token);
    expect(header).toMatchObject({ alg: "RS256", typ: "at+jwt", kid: expect.any(String) as unknown });
    expect(Object.keys(claims).sort()).toEqual(
      ["exp", "iss", "client_id", "sub", "auth_time", "idp", "tenant_id", "scope", "amr", "iat", "jti"].sort(),
    );
    expect(claims).not.toHaveProperty("aud");
    expect(claims["iss"]).toBe(running.url);
    expect(claims["client_id"]).toBe(WEB_CLIENT);
    expect(claims["sub"]).toBe(TEACHER.sub);
    expect(claims["tenant_id"]).toBe(TENANT_A);
    expect(claims["idp"]).toBe("local");
    expect(claims["scope"]).toEqual(["openid", "profile", "email", "apiclients"]);
    expect(claims["amr"]).toEqual(["pwd"]);
    expect(claims["auth_time"] as number).toBeGreaterThanOrEqual(started - 1);
    expect(claims["exp"]).toBe((claims["iat"] as number) + 3600);
    expect(claims["jti"]).toMatch(UUID);
    // Verifies with the published keys.
    const jwks = createRemoteJWKSet(new URL(`${running.url}/.well-known/openid-configuration/jwks`));
    await expect(
      jwtVerify(tokens.access_token, jwks, { issuer: running.url, typ: "at+jwt", algorithms: ["RS256"] }),
    ).resolves.toBeTruthy();
  });

  it("userinfo returns the spec 2.4 object for openid profile email", async () => {
    const { config, tokens } = await userFlow("openid profile email apiclients");
    const info = await oidc.fetchUserInfo(config, tokens.access_token, TEACHER.sub);
    expect(info).toEqual({
      sub: TEACHER.sub,
      preferred_username: "enseignant.jeune",
      email: "enseignant.jeune@exemple.test",
      email_verified: true,
      family_name: "Tremblay",
      given_name: "Camille",
      name: "Camille Tremblay",
    });
  });

  it.each([
    ["openid", ["sub"]],
    ["openid profile", ["sub", "preferred_username", "family_name", "given_name", "name"]],
    ["openid email", ["sub", "email", "email_verified"]],
  ])("userinfo filters fields by scope (%s)", async (scope, fields) => {
    const { config, tokens } = await userFlow(scope);
    const info = await oidc.fetchUserInfo(config, tokens.access_token, TEACHER.sub);
    expect(Object.keys(info).sort()).toEqual([...fields].sort());
  });

  it("without openid there is no ID token and userinfo refuses (403 insufficient_scope)", async () => {
    const { tokens } = await userFlow("apiclients");
    expect(tokens.id_token).toBeUndefined();
    expect(decode(tokens.access_token).claims["scope"]).toEqual(["apiclients"]);
    const res = await fetch(`${running.url}/connect/userinfo`, {
      headers: { Authorization: `Bearer ${tokens.access_token}` },
    });
    expect(res.status).toBe(403);
    expect(res.headers.get("www-authenticate")).toContain('error="insufficient_scope"');
  });
});

describe("flow application (client credentials)", () => {
  it.each([
    ["client_secret_post", oidc.ClientSecretPost(MACHINE_SECRET)],
    ["client_secret_basic", oidc.ClientSecretBasic(MACHINE_SECRET)],
  ])("issues a spec 2.3 token with %s", async (_name, auth) => {
    const config = await oidc.discovery(new URL(running.url), MACHINE_CLIENT, undefined, auth, insecure);
    const started = Math.floor(Date.now() / 1000);
    const tokens = await oidc.clientCredentialsGrant(config, { scope: "apiclients" });
    expect(tokens.token_type.toLowerCase()).toBe("bearer");
    expect(tokens.expires_in).toBe(3600);
    expect(tokens.scope).toBe("apiclients");
    expect(tokens.id_token).toBeUndefined();
    const { header, claims } = decode(tokens.access_token);
    expect(header).toMatchObject({ alg: "RS256", typ: "at+jwt", kid: expect.any(String) as unknown });
    expect(Object.keys(claims).sort()).toEqual(
      ["nbf", "exp", "iss", "aud", "client_id", "tenant_id", "scope", "iat", "jti"].sort(),
    );
    for (const absent of ["sub", "auth_time", "idp", "amr"]) expect(claims).not.toHaveProperty(absent);
    expect(claims["aud"]).toBe("apiclients");
    expect(claims["iss"]).toBe(running.url);
    expect(claims["client_id"]).toBe(MACHINE_CLIENT);
    expect(claims["tenant_id"]).toBe(TENANT_A);
    expect(claims["scope"]).toEqual(["apiclients"]);
    expect(claims["nbf"] as number).toBeGreaterThanOrEqual(started - 1);
    expect(claims["nbf"]).toBe(claims["iat"]);
    expect(claims["exp"]).toBe((claims["iat"] as number) + 3600);
    const jwks = createRemoteJWKSet(new URL(`${running.url}/.well-known/openid-configuration/jwks`));
    await expect(
      jwtVerify(tokens.access_token, jwks, { issuer: running.url, audience: "apiclients", typ: "at+jwt" }),
    ).resolves.toBeTruthy();
  });

  it("the tenant-B machine client gets tenant B", async () => {
    const config = await oidc.discovery(
      new URL(running.url),
      "portier-demo-machine-b",
      "portier-demo-secret-b",
      undefined,
      insecure,
    );
    const tokens = await oidc.clientCredentialsGrant(config, { scope: "apiclients" });
    expect(decode(tokens.access_token).claims["tenant_id"]).toBe(TENANT_B);
  });

  it("the application token is refused by userinfo (no user)", async () => {
    const config = await oidc.discovery(new URL(running.url), MACHINE_CLIENT, MACHINE_SECRET, undefined, insecure);
    const tokens = await oidc.clientCredentialsGrant(config, { scope: "apiclients" });
    const res = await fetch(`${running.url}/connect/userinfo`, {
      headers: { Authorization: `Bearer ${tokens.access_token}` },
    });
    expect(res.status).toBe(403);
  });
});
