/**
 * verifyCached: the synchronous answer of the verified-token cache that the decision pipeline takes before
 * `verify`. It answers only what `verify` would answer from its cache (a token verified before, not expired
 * beyond the tolerance, verifier open, cache on); anything else is undefined, and `verify` decides.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createAccessTokenVerifier } from "../../src/auth/index.js";
import { appClaims, makeKey, NOW, sign, startIssuer } from "./helpers.js";

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0)) await f();
});

async function setup(opts: Record<string, unknown> = {}) {
  const k1 = await makeKey("k1");
  const issuer = await startIssuer([k1]);
  let now = NOW;
  const v = createAccessTokenVerifier({ issuer: issuer.url, now: () => now, clockToleranceSec: 30, ...opts });
  cleanup.push(() => v.close(), () => issuer.close());
  await v.ready();
  const token = await sign(appClaims(issuer.url), k1);
  return { v, token, exp: appClaims(issuer.url).exp as number, setNow: (n: number) => (now = n) };
}

describe("verifyCached", () => {
  it("undefined before the token was verified, the cached answer after", async () => {
    const { v, token } = await setup();
    expect(v.verifyCached!(token)).toBeUndefined();
    const first = await v.verify(token);
    expect(v.verifyCached!(token)).toEqual({ ...first, cached: true });
    expect(v.verifyCached!(token + "x")).toBeUndefined();
  });

  it("undefined once the token expired beyond the tolerance (verify then says token_expired)", async () => {
    const { v, token, exp, setNow } = await setup();
    await v.verify(token);
    setNow(exp + 29);
    expect(v.verifyCached!(token)?.cached).toBe(true);
    setNow(exp + 30);
    expect(v.verifyCached!(token)).toBeUndefined();
    await expect(v.verify(token)).rejects.toMatchObject({ code: "token_expired" });
  });

  it("undefined with the cache off and once the verifier is closed", async () => {
    const off = await setup({ cacheSize: 0 });
    await off.v.verify(off.token);
    expect(off.v.verifyCached!(off.token)).toBeUndefined();
    const { v, token } = await setup();
    await v.verify(token);
    v.close();
    expect(v.verifyCached!(token)).toBeUndefined();
  });
});
