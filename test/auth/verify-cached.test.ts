/**
 * verifyCached: the synchronous cache lookup the service tries before verify(): an answer only for a token
 * verified before, still inside its exp, whose key is still published; undefined sends the caller to verify().
 */
import { afterAll, describe, expect, it } from "vitest";
import { createAccessTokenVerifier } from "../../src/auth/index.js";
import { refreshKeys, appClaims, makeKey, sign, startIssuer, NOW, type TestIssuer } from "./helpers.js";

const issuers: TestIssuer[] = [];
afterAll(async () => {
  for (const i of issuers) await i.close();
});

async function setup(options: { cacheSize?: number } = {}) {
  const key = await makeKey("c1");
  const issuer = await startIssuer([key]);
  issuers.push(issuer);
  let now = NOW;
  const v = createAccessTokenVerifier({ issuer: issuer.url, now: () => now, refreshCooldownMs: 0, ...options });
  await v.ready();
  const token = await sign(appClaims(issuer.url, { exp: NOW + 100 }), key);
  return { v, token, issuer, setNow: (t: number) => (now = t) };
}

describe("verifyCached", () => {
  it("answers a token verified before, marked cached, with the claims verify gave", async () => {
    const { v, token } = await setup();
    expect(v.verifyCached(token)).toBeUndefined();
    const first = await v.verify(token);
    const again = v.verifyCached(token);
    expect(again?.cached).toBe(true);
    expect(again?.claims).toBe(first.claims);
    v.close();
  });

  it("has no answer once the token expired (verify then says token_expired)", async () => {
    const { v, token, setNow } = await setup();
    await v.verify(token);
    setNow(NOW + 100 + 31);
    expect(v.verifyCached(token)).toBeUndefined();
    await expect(v.verify(token)).rejects.toMatchObject({ code: "token_expired" });
    v.close();
  });

  it("has no answer once the token's key is no longer published", async () => {
    const { v, token, issuer } = await setup();
    await v.verify(token);
    issuer.keys = [await makeKey("c2")];
    await refreshKeys(v);
    expect(v.verifyCached(token)).toBeUndefined();
    v.close();
  });

  it("has no answer with the cache off, after close, or for what is not a token", async () => {
    const off = await setup({ cacheSize: 0 });
    await off.v.verify(off.token);
    expect(off.v.verifyCached(off.token)).toBeUndefined();
    off.v.close();
    const { v, token } = await setup();
    await v.verify(token);
    expect(v.verifyCached(undefined as unknown as string)).toBeUndefined();
    expect(v.verifyCached("")).toBeUndefined();
    v.close();
    expect(v.verifyCached(token)).toBeUndefined();
  });
});
