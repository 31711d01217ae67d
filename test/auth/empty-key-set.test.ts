/**
 * A key set with no key usable to verify signatures (issue 17 item 4) is refused like an empty directory:
 * at the first load the keys stay unavailable (keys_unavailable, not a loaded set that answers kid_unknown),
 * at a reload the previous keys keep verifying and the refusal is reported. What counts as unusable is
 * src/auth/key-store.ts unusableReason(): not RSA/EC/OKP, private, use other than "sig", key_ops without
 * "verify", a curve that does not sign, or an alg that is no signature algorithm of the key's type.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createAccessTokenVerifier, TokenError } from "../../src/auth/index.js";
import { unusableReason } from "../../src/auth/key-store.js";
import { appClaims, makeKey, NOW, refreshKeys, sign } from "./helpers.js";

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0)) await f();
});

const code = (p: Promise<unknown>) =>
  p.then(
    () => "ok",
    (e: unknown) => (e instanceof TokenError ? e.code : `not a TokenError: ${String(e)}`),
  );

/** A JWKS URL on 127.0.0.1 answering whatever document the test sets (keys that TestKeys cannot express). */
async function issuerServing(): Promise<{ url: string; document: unknown }> {
  const state = { url: "", document: { keys: [] } as unknown };
  const server = createServer((_req, res) =>
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(state.document)),
  );
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  cleanup.push(() => new Promise((r) => server.close(r)));
  return state;
}

/** Generated once: RSA key generation is slow on a busy machine. */
const once = <T>(make: () => Promise<T>) => {
  let p: Promise<T> | undefined;
  return () => (p ??= make());
};
const rsaKey = once(() => makeKey("r", "RS256"));
const goodKey = once(() => makeKey("good", "RS256"));
const rsa = async () => ({ ...(await rsaKey()).publicJwk });
const ec = once(async () => (await makeKey("e", "ES256")).publicJwk);

/** Sets that must count as empty, and the reason named for their first key. */
const UNUSABLE: { why: string; keys: () => Promise<unknown[]>; reason: RegExp }[] = [
  { why: "no keys at all", keys: async () => [], reason: /0 keys\)/ },
  {
    why: "a symmetric key",
    keys: async () => [{ kty: "oct", k: "c2VjcmV0", kid: "s" }],
    reason: /kty "oct" is not RSA, EC or OKP/,
  },
  { why: "an encryption key", keys: async () => [{ ...(await rsa()), use: "enc" }], reason: /use "enc" is not "sig"/ },
  { why: "a private key", keys: async () => [{ ...(await rsa()), d: "AQAB" }], reason: /a private key/ },
  {
    why: "key_ops without verify",
    keys: async () => [{ ...(await rsa()), key_ops: ["encrypt"] }],
    reason: /key_ops without "verify"/,
  },
  {
    why: "an RSA key naming HS256",
    keys: async () => [{ ...(await rsa()), alg: "HS256" }],
    reason: /alg "HS256" is not a signature algorithm of RSA/,
  },
  {
    why: "an RSA key naming an encryption alg",
    keys: async () => [{ ...(await rsa()), alg: "RSA-OAEP" }],
    reason: /alg "RSA-OAEP"/,
  },
  {
    why: "an EC key naming RS256",
    keys: async () => [{ ...(await ec()), alg: "RS256" }],
    reason: /alg "RS256" is not a signature algorithm of EC/,
  },
  {
    why: "a P-256 key naming ES384",
    keys: async () => [{ ...(await ec()), alg: "ES384" }],
    reason: /alg ES384 does not fit crv P-256/,
  },
  {
    why: "an X25519 (key agreement) key",
    keys: async () => [{ kty: "OKP", crv: "X25519", x: "AAAA" }],
    reason: /crv "X25519" is not a signing curve of OKP/,
  },
  { why: "not an object", keys: async () => ["RS256", null], reason: /not a JSON object/ },
  {
    why: "several unusable keys",
    keys: async () => [
      { ...(await rsa()), use: "enc" },
      { kty: "oct", k: "AA" },
    ],
    reason: /2 keys; key 0 \(kid "r"\): use "enc".*key 1: kty "oct"/,
  },
];

describe("a key set without a usable key", () => {
  it.each(UNUSABLE)(
    "at the first load, $why: keys stay unavailable and the reason is named",
    async ({ keys, reason }) => {
      const issuer = await issuerServing();
      issuer.document = { keys: await keys() };
      const v = createAccessTokenVerifier({ issuer: issuer.url, jwksUri: `${issuer.url}/jwks`, now: () => NOW });
      cleanup.push(() => v.close());
      await expect(v.ready()).rejects.toMatchObject({ code: "keys_unavailable" });
      expect(v.status()).toMatchObject({ ready: false, keyCount: 0, refreshFailures: 1 });
      expect(v.status().lastError).toMatch(/^the JWKS has no key usable to verify signatures/);
      expect(v.status().lastError).toMatch(reason);
      expect(await code(v.verify(await sign(appClaims(issuer.url), await rsaKey())))).toBe("keys_unavailable");
    },
  );

  it.each(UNUSABLE)(
    "at a reload, $why: the previous keys keep verifying and the refusal is reported",
    async ({ keys }) => {
      const issuer = await issuerServing();
      const good = await goodKey();
      issuer.document = { keys: [good.publicJwk] };
      const v = createAccessTokenVerifier({
        issuer: issuer.url,
        jwksUri: `${issuer.url}/jwks`,
        now: () => NOW,
        refreshCooldownMs: 0,
      });
      cleanup.push(() => v.close());
      await v.ready();
      issuer.document = { keys: await keys() };
      await refreshKeys(v);
      expect(v.status()).toMatchObject({ ready: true, keyCount: 1, refreshFailures: 1 });
      expect(v.status().lastError).toMatch(/^the JWKS has no key usable to verify signatures/);
      expect(await code(v.verify(await sign(appClaims(issuer.url), good)))).toBe("ok");
      issuer.document = { keys: [good.publicJwk] };
      await refreshKeys(v);
      expect(v.status().lastError).toBeUndefined();
    },
  );

  it("a set with one usable key among unusable ones loads that key only", async () => {
    const issuer = await issuerServing();
    const good = await makeKey("good", "PS256");
    issuer.document = { keys: [{ kty: "oct", k: "AA" }, { ...(await rsa()), use: "enc" }, good.publicJwk] };
    const v = createAccessTokenVerifier({ issuer: issuer.url, jwksUri: `${issuer.url}/jwks`, now: () => NOW });
    cleanup.push(() => v.close());
    await v.ready();
    expect(v.status()).toMatchObject({ ready: true, keyCount: 1 });
    expect(await code(v.verify(await sign(appClaims(issuer.url), good)))).toBe("ok");
  });
});

describe("unusableReason", () => {
  it.each([
    { why: "RSA, RS256, sig", jwk: async () => rsa() },
    { why: "RSA without alg or use", jwk: async () => ({ ...(await rsa()), alg: undefined, use: undefined }) },
    { why: "RSA naming PS512", jwk: async () => ({ ...(await rsa()), alg: "PS512" }) },
    { why: "EC P-256, ES256", jwk: async () => ec() },
    { why: "EC with key_ops [verify]", jwk: async () => ({ ...(await ec()), key_ops: ["verify"] }) },
    { why: "OKP Ed25519, EdDSA", jwk: async () => ({ kty: "OKP", crv: "Ed25519", x: "AAAA", alg: "EdDSA" }) },
  ])("accepts $why", async ({ jwk }) => {
    expect(unusableReason(JSON.parse(JSON.stringify(await jwk())))).toBeUndefined();
  });

  it("bounds what it repeats of a hostile member", () => {
    expect(unusableReason({ kty: "x".repeat(100_000) })!.length).toBeLessThan(80);
  });
});
