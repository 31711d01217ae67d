/**
 * The key resolver handed to jose's jwtVerify: a token without kid is tried against every key of the issuer
 * that fits its alg, in turn, and refused only when none verifies it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccessTokenVerifier, type PortierAccessTokenVerifier } from "../../src/auth/index.js";
import { appClaims, makeKey, signRaw, startIssuer, NOW, type TestIssuer, type TestKey } from "./helpers.js";

let first: TestKey, second: TestKey, stranger: TestKey;
let issuer: TestIssuer;
let v: PortierAccessTokenVerifier;

beforeAll(async () => {
  [first, second, stranger] = await Promise.all([makeKey("a"), makeKey("b"), makeKey("c")]);
  // Published without kid (and without alg), so a token without kid fits both.
  const bare = (k: TestKey): TestKey => {
    const { kid: _kid, alg: _alg, ...publicJwk } = k.publicJwk;
    return { ...k, publicJwk };
  };
  issuer = await startIssuer([bare(first), bare(second)]);
  v = createAccessTokenVerifier({ issuer: issuer.url, now: () => NOW });
  await v.ready();
});
afterAll(async () => {
  v.close();
  await issuer.close();
});

describe("tokens without kid", () => {
  it.each([
    ["the first key", () => first],
    ["the second key", () => second],
  ])("signed by %s: verifies", async (_n, key) => {
    const r = await v.verify(await signRaw({ alg: "RS256", typ: "at+jwt" }, appClaims(issuer.url), key()));
    expect(r.claims.iss).toBe(issuer.url);
  });

  it("signed by a key the issuer does not publish: signature_invalid", async () => {
    await expect(
      v.verify(await signRaw({ alg: "RS256", typ: "at+jwt" }, appClaims(issuer.url), stranger)),
    ).rejects.toMatchObject({ code: "signature_invalid" });
  });
});

// Issue 17 item 9, RFC 7517 4.4: a key's own alg restricts what it verifies. One RSA key, published with
// different alg members; the tokens are RS256, signed by that key's private half, with and without kid.
describe("a JWK's own alg", () => {
  it.each([
    { published: "PS256", kid: true, result: "signature_invalid" },
    { published: "PS256", kid: false, result: "signature_invalid" },
    { published: "RS512", kid: true, result: "signature_invalid" },
    { published: "RS256", kid: true, result: "ok" },
    { published: undefined, kid: true, result: "ok" },
    { published: undefined, kid: false, result: "ok" },
  ])("published as $published: an RS256 token (kid: $kid) is $result", async ({ published, kid, result }) => {
    const key = await makeKey("rsa-key", "RS256");
    const { alg: _alg, ...jwk } = key.publicJwk;
    const own = await startIssuer([{ ...key, publicJwk: published === undefined ? jwk : { ...jwk, alg: published } }]);
    const verifier = createAccessTokenVerifier({ issuer: own.url, now: () => NOW, refreshCooldownMs: 60_000 });
    try {
      await verifier.ready();
      const token = await signRaw(
        { alg: "RS256", typ: "at+jwt", ...(kid ? { kid: key.kid } : {}) },
        appClaims(own.url),
        key,
      );
      const outcome = await verifier.verify(token).then(
        () => "ok",
        (e: { code?: string }) => e.code,
      );
      expect(outcome).toBe(result);
    } finally {
      verifier.close();
      await own.close();
    }
  });
});
