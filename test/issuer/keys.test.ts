/**
 * Key rotation: a new signing key is published with the previous one, so tokens signed before the
 * rotation still verify against the JWKS; the key before that is retired.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocalJWKSet, createRemoteJWKSet, jwtVerify } from "jose";
import { startIssuer, type RunningIssuer } from "../../src/issuer/index.js";
import {
  MACHINE_CLIENT,
  MACHINE_SECRET,
  REDIRECT_URI,
  WEB_CLIENT,
  decode,
  obtainCode,
  tokenRequest,
} from "./helpers.js";

let running: RunningIssuer;
beforeAll(async () => {
  running = await startIssuer();
});
afterAll(async () => {
  await running.close();
});

async function machineToken(): Promise<string> {
  const res = await tokenRequest(running.url, {
    grant_type: "client_credentials",
    client_id: MACHINE_CLIENT,
    client_secret: MACHINE_SECRET,
    scope: "apiclients",
  });
  return res.body["access_token"] as string;
}

async function publishedJwks() {
  return (await (await fetch(`${running.url}/.well-known/openid-configuration/jwks`)).json()) as {
    keys: Array<{ kid: string }>;
  };
}

describe("key rotation", () => {
  it("keeps the previous key published so old tokens still verify", async () => {
    const before = await machineToken();
    const oldKid = decode(before).header["kid"];
    const { kid: newKid } = await running.issuer.rotateKeys();
    expect(newKid).not.toBe(oldKid);

    const after = await machineToken();
    expect(decode(after).header["kid"]).toBe(newKid);
    const jwks = await publishedJwks();
    expect(jwks.keys.map((k) => k.kid)).toEqual([newKid, oldKid]);

    const remote = createRemoteJWKSet(new URL(`${running.url}/.well-known/openid-configuration/jwks`));
    for (const token of [before, after]) {
      await expect(jwtVerify(token, remote, { issuer: running.url, audience: "apiclients" })).resolves.toBeTruthy();
    }

    // A second rotation retires the oldest key: tokens it signed no longer verify.
    await running.issuer.rotateKeys();
    const local = createLocalJWKSet(await publishedJwks());
    expect((await publishedJwks()).keys).toHaveLength(2);
    await expect(jwtVerify(before, local)).rejects.toThrow();
    await expect(jwtVerify(after, local)).resolves.toBeTruthy();
  });

  it("userinfo accepts user tokens signed with the previous key", async () => {
    const { code, verifier } = await obtainCode(running.url);
    const res = await tokenRequest(running.url, {
      grant_type: "authorization_code",
      client_id: WEB_CLIENT,
      redirect_uri: REDIRECT_URI,
      code,
      code_verifier: verifier,
    });
    await running.issuer.rotateKeys();
    const info = await fetch(`${running.url}/connect/userinfo`, {
      headers: { Authorization: `Bearer ${res.body["access_token"] as string}` },
    });
    expect(info.status).toBe(200);
  });
});
