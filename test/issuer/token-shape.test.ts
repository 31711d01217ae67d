/**
 * The issuer in a project's token shape (data/project.json claims, user_token.scope, application_token): which
 * claims name the user and the tenant, which scopes a client may be granted, the application audience; and the
 * spec's shape by default.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startIssuer, type IssuerTokenShape, type RunningIssuer } from "../../src/issuer/index.js";
import {
  MACHINE_CLIENT,
  MACHINE_SECRET,
  REDIRECT_URI,
  TENANT_A,
  TEACHER,
  WEB_CLIENT,
  decode,
  obtainCode,
  tokenRequest,
} from "./helpers.js";

const TEAM_SHAPE: IssuerTokenShape = {
  subjectClaim: "uid",
  tenantClaim: "org",
  userScope: "orders.read",
  applicationAudience: "orders-api",
  applicationScope: "orders.machine",
};
const NO_TENANT_NO_APP: IssuerTokenShape = {
  subjectClaim: "uid",
  tenantClaim: null,
  userScope: null,
  applicationAudience: null,
  applicationScope: null,
};

async function userTokens(url: string, scope: string) {
  const { code, verifier } = await obtainCode(url, { scope });
  return tokenRequest(url, {
    grant_type: "authorization_code",
    client_id: WEB_CLIENT,
    code,
    redirect_uri: REDIRECT_URI,
    code_verifier: verifier,
  });
}

function machineToken(url: string, scope?: string) {
  return tokenRequest(url, {
    grant_type: "client_credentials",
    client_id: MACHINE_CLIENT,
    client_secret: MACHINE_SECRET,
    ...(scope !== undefined ? { scope } : {}),
  });
}

describe("a project naming its user uid, its tenant org, with its own scopes and audience", () => {
  let running: RunningIssuer;
  beforeAll(async () => {
    running = await startIssuer({ host: "127.0.0.1", port: 0, tokenShape: TEAM_SHAPE });
  });
  afterAll(async () => {
    await running.close();
  });

  it("signs the user's id under uid and the tenant under org in the access token, not sub or tenant_id", async () => {
    const { status, body } = await userTokens(running.url, "openid orders.read");
    expect(status).toBe(200);
    expect(body.scope).toBe("openid orders.read");
    const { claims } = decode(body.access_token as string);
    expect(claims).toMatchObject({ uid: TEACHER.sub, org: TENANT_A, scope: ["openid", "orders.read"] });
    expect(claims).not.toHaveProperty("sub");
    expect(claims).not.toHaveProperty("tenant_id");
  });

  it("keeps sub in the ID token (OIDC requires it) beside uid and org", async () => {
    const { body } = await userTokens(running.url, "openid orders.read");
    const { claims } = decode(body.id_token as string);
    expect(claims).toMatchObject({ sub: TEACHER.sub, uid: TEACHER.sub, org: TENANT_A });
    expect(claims).not.toHaveProperty("tenant_id");
  });

  it("userinfo finds the user by uid", async () => {
    const { body } = await userTokens(running.url, "openid orders.read");
    const res = await fetch(`${running.url}/connect/userinfo`, {
      headers: { authorization: `Bearer ${String(body.access_token)}` },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ sub: TEACHER.sub });
  });

  it.each([
    ["the spec's scope, which this project does not use", "openid apiclients"],
    ["the application scope", "openid orders.machine"],
  ])("refuses a user token with %s", async (_what, scope) => {
    await expect(obtainCode(running.url, { scope })).rejects.toThrow(/did not redirect with a code/);
  });

  it("a machine client gets aud orders-api, scope orders.machine and its tenant under org", async () => {
    const { status, body } = await machineToken(running.url);
    expect(status).toBe(200);
    expect(body.scope).toBe("orders.machine");
    const { claims } = decode(body.access_token as string);
    expect(claims).toMatchObject({ aud: "orders-api", org: TENANT_A, scope: ["orders.machine"] });
    expect(claims).not.toHaveProperty("tenant_id");
    expect(claims).not.toHaveProperty("uid");
  });

  it("refuses a machine client the spec's scope", async () => {
    const { status, body } = await machineToken(running.url, "apiclients");
    expect(status).toBe(400);
    expect(body).toMatchObject({ error: "invalid_scope" });
    expect(String(body.error_description)).toContain("only scope orders.machine");
  });

  it("publishes its scopes and claims in the discovery document", async () => {
    const doc = (await (await fetch(`${running.url}/.well-known/openid-configuration`)).json()) as Record<
      string,
      string[]
    >;
    expect(doc.scopes_supported).toEqual(["openid", "profile", "email", "orders.read", "orders.machine"]);
    expect(doc.claims_supported).toEqual(expect.arrayContaining(["sub", "uid", "org"]));
    expect(doc.claims_supported).not.toContain("tenant_id");
  });
});

describe("a project with no tenant claim, no user scope and no application audience or scope", () => {
  let running: RunningIssuer;
  beforeAll(async () => {
    running = await startIssuer({ host: "127.0.0.1", port: 0, tokenShape: NO_TENANT_NO_APP });
  });
  afterAll(async () => {
    await running.close();
  });

  it("signs user tokens without a tenant, and refuses an API scope", async () => {
    const { body } = await userTokens(running.url, "openid");
    const { claims } = decode(body.access_token as string);
    expect(claims).toMatchObject({ uid: TEACHER.sub, scope: ["openid"] });
    expect(claims).not.toHaveProperty("tenant_id");
    await expect(obtainCode(running.url, { scope: "openid apiclients" })).rejects.toThrow(/did not redirect/);
  });

  it("signs machine tokens without aud, scope or tenant, and refuses any scope", async () => {
    const { status, body } = await machineToken(running.url);
    expect(status).toBe(200);
    const { claims } = decode(body.access_token as string);
    expect(claims).toMatchObject({ client_id: MACHINE_CLIENT, scope: [] });
    expect(claims).not.toHaveProperty("aud");
    expect(claims).not.toHaveProperty("tenant_id");
    const refused = await machineToken(running.url, "apiclients");
    expect(refused.body).toMatchObject({ error: "invalid_scope" });
    expect(String(refused.body.error_description)).toContain("no scope may be granted");
  });
});
