/**
 * ID token validation (spec 2.1 / 5.4) as a library function and as `portier id-token validate`:
 * every failure named, at_hash / s_hash for RS256, PS256, ES256 and ES384.
 */
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import {
  validateIdToken,
  halfHash,
  createAccessTokenVerifier,
  TokenError,
  type TokenErrorCode,
} from "../../src/auth/index.js";
import { run } from "../../src/cli/commands/id-token.js";
import { makeKey, signRaw, startIssuer, NOW, USER, TENANT, type TestKey, type TestIssuer } from "./helpers.js";

const ISS = "https://id.example";
const CLIENT = "webapp";
const ACCESS = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln";
const STATE = "af0ifjsldkj";
const NONCE = "n-0S6_WzA2Mj";

let keys: Record<string, TestKey>;
let jwks: { keys: unknown[] };

beforeAll(async () => {
  keys = {};
  for (const alg of ["RS256", "PS256", "ES256", "ES384"]) keys[alg] = await makeKey(`k-${alg}`, alg);
  jwks = { keys: Object.values(keys).map((k) => k.publicJwk) };
});

function idClaims(alg: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    iss: ISS,
    aud: CLIENT,
    exp: NOW + 300,
    iat: NOW,
    sub: USER,
    auth_time: NOW - 10,
    idp: "local",
    tenant_id: TENANT,
    amr: "pwd",
    sid: "sid1",
    nonce: NONCE,
    at_hash: halfHash(ACCESS, alg),
    s_hash: halfHash(STATE, alg),
    ...extra,
  };
}
const signId = (alg: string, extra: Record<string, unknown> = {}, key = keys[alg]!) =>
  signRaw({ alg, kid: key.kid, typ: "JWT" }, idClaims(alg, extra), key, alg);
const opts = { issuer: ISS, clientId: CLIENT, now: NOW, nonce: NONCE, accessToken: ACCESS, state: STATE };
const code = (p: Promise<unknown>) =>
  p.then(
    () => "ok",
    (e: unknown) => (e instanceof TokenError ? e.code : `not a TokenError: ${String(e)}`),
  );

describe("halfHash", () => {
  it.each([
    ["RS256", "sha256"],
    ["PS256", "sha256"],
    ["ES256", "sha256"],
    ["ES384", "sha384"],
    ["RS512", "sha512"],
  ])("%s uses %s, left half, base64url", (alg, h) => {
    const d = createHash(h).update(ACCESS).digest();
    expect(halfHash(ACCESS, alg)).toBe(d.subarray(0, d.length / 2).toString("base64url"));
  });
  it("matches the OpenID Connect Core example at_hash", () => {
    // OIDC Core A.4: access_token jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y -> at_hash 77QmUPtjPfzWtF2AnpK9RQ
    expect(halfHash("jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y", "RS256")).toBe("77QmUPtjPfzWtF2AnpK9RQ");
  });
});

describe("validateIdToken", () => {
  it.each(["RS256", "PS256", "ES256", "ES384"])(
    "a good %s ID token validates with nonce, at_hash and s_hash",
    async (alg) => {
      const c = await validateIdToken(await signId(alg), { ...opts, keys: jwks });
      expect(c).toMatchObject({ sub: USER, aud: [CLIENT], amr: ["pwd"], sid: "sid1" });
    },
  );

  const table: Array<[string, TokenErrorCode, () => Promise<string>, Record<string, unknown>?]> = [
    ["wrong iss", "issuer_mismatch", () => signId("RS256", { iss: "https://other" })],
    ["missing iss", "issuer_mismatch", () => signId("RS256", { iss: undefined })],
    ["aud another client", "audience_mismatch", () => signId("RS256", { aud: "other" })],
    ["aud list without us", "audience_mismatch", () => signId("RS256", { aud: ["a", "b"] })],
    ["azp another client", "audience_mismatch", () => signId("RS256", { aud: [CLIENT, "b"], azp: "b" })],
    ["expired", "token_expired", () => signId("ES256", { exp: NOW - 60 })],
    ["iat in the future", "token_not_yet_valid", () => signId("ES256", { iat: NOW + 60 })],
    ["iat missing", "claims_invalid", () => signId("ES256", { iat: undefined })],
    ["sub missing", "claims_invalid", () => signId("ES256", { sub: undefined })],
    ["nonce wrong", "nonce_mismatch", () => signId("PS256", { nonce: "other" })],
    ["nonce missing", "nonce_mismatch", () => signId("PS256", { nonce: undefined })],
    ["at_hash wrong", "at_hash_mismatch", () => signId("ES384", { at_hash: halfHash("other", "ES384") })],
    [
      "at_hash with the wrong hash size",
      "at_hash_mismatch",
      () => signId("ES384", { at_hash: halfHash(ACCESS, "ES256") }),
    ],
    ["at_hash missing", "at_hash_mismatch", () => signId("RS256", { at_hash: undefined })],
    ["s_hash wrong", "s_hash_mismatch", () => signId("ES256", { s_hash: halfHash("x", "ES256") })],
    ["s_hash missing", "s_hash_mismatch", () => signId("ES256", { s_hash: undefined })],
    ["signed by a stranger", "kid_unknown", async () => signId("RS256", {}, await makeKey("stranger"))],
    [
      "forged with a known kid",
      "signature_invalid",
      async () => signRaw({ alg: "RS256", kid: "k-RS256" }, idClaims("RS256"), await makeKey("x")),
    ],
    [
      "alg none",
      "alg_not_allowed",
      async () =>
        `${Buffer.from('{"alg":"none"}').toString("base64url")}.` +
        `${Buffer.from(JSON.stringify(idClaims("RS256"))).toString("base64url")}.`,
    ],
    ["garbage", "token_malformed", async () => "a.b"],
  ];
  it.each(table)("%s -> %s", async (_n, c, make) => {
    expect(await code(validateIdToken(await make(), { ...opts, keys: jwks }))).toBe(c);
  });

  it("nonce/at_hash/s_hash are only checked when given", async () => {
    const t = await signId("RS256", { nonce: undefined, at_hash: undefined, s_hash: undefined });
    expect(await code(validateIdToken(t, { issuer: ISS, clientId: CLIENT, now: NOW, keys: jwks }))).toBe("ok");
  });

  it("accepts a verifier as the key source", async () => {
    const dir = mkdtempSync(join(tmpdir(), "portier-idt-"));
    writeFileSync(join(dir, "jwks.json"), JSON.stringify(jwks));
    const v = createAccessTokenVerifier({ issuer: ISS, jwksFile: join(dir, "jwks.json") });
    await v.ready();
    expect(await code(validateIdToken(await signId("ES384"), { ...opts, keys: v }))).toBe("ok");
    v.close();
  });

  it("option mistakes throw TypeError naming the option", async () => {
    await expect(validateIdToken("x", { ...opts, clientId: "", keys: jwks })).rejects.toThrow(/clientId/);
    await expect(validateIdToken("x", { ...opts, keys: {} as never })).rejects.toThrow(/keys/);
    await expect(validateIdToken("x", { ...opts, keys: jwks, algorithms: ["HS256"] })).rejects.toThrow(/algorithms/);
  });
});

describe("portier id-token validate", () => {
  let issuer: TestIssuer;
  let jwksFile: string;
  beforeAll(async () => {
    issuer = await startIssuer(Object.values(keys));
    const dir = mkdtempSync(join(tmpdir(), "portier-cli-"));
    jwksFile = join(dir, "jwks.json");
    writeFileSync(jwksFile, JSON.stringify(jwks));
  });
  afterAll(() => issuer.close());

  async function cli(argv: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const exit = await run(argv, { out: (t) => out.push(t), err: (t) => err.push(t) });
    return { exit, out: out.join("\n"), err: err.join("\n") };
  }
  const fresh = (alg: string, iss: string, extra: Record<string, unknown> = {}) =>
    signId(alg, { iss, exp: Math.floor(Date.now() / 1000) + 300, iat: Math.floor(Date.now() / 1000), ...extra });

  it("valid token via discovery: exit 0, claims as JSON", async () => {
    const t = await fresh("ES256", issuer.url);
    const r = await cli([
      "validate",
      "--client-id",
      CLIENT,
      "--issuer",
      issuer.url,
      "--nonce",
      NONCE,
      "--access-token",
      ACCESS,
      "--state",
      STATE,
      t,
    ]);
    expect(r.err).toBe("");
    expect(r.exit).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ sub: USER, aud: [CLIENT], iss: issuer.url });
  });

  it("valid token via --jwks file and --jwks URL", async () => {
    const t = await fresh("RS256", ISS);
    expect((await cli(["validate", "--client-id", CLIENT, "--issuer", ISS, "--jwks", jwksFile, t])).exit).toBe(0);
    expect(
      (await cli(["validate", "--client-id", CLIENT, "--issuer", ISS, "--jwks", `${issuer.url}/jwks`, t])).exit,
    ).toBe(0);
  });

  it.each([
    ["--nonce", "wrong", "nonce_mismatch"],
    ["--state", "wrong", "s_hash_mismatch"],
    ["--access-token", "wrong", "at_hash_mismatch"],
    ["--client-id", "other", "audience_mismatch"],
  ])("%s %s: exit 1 naming %s, no stack, no token", async (flag, value, name) => {
    const t = await fresh("PS256", ISS);
    const argv = ["validate", "--client-id", CLIENT, "--issuer", ISS, "--jwks", jwksFile, flag, value, t];
    const r = await cli(argv);
    expect(r.exit).toBe(1);
    expect(r.err).toContain(name);
    expect(r.err).not.toMatch(/\n\s+at /);
    expect(r.err).not.toContain(t.split(".")[1]!.slice(0, 16));
  });

  it("unreachable issuer: exit 2 keys_unavailable (no answer about the token)", async () => {
    const r = await cli([
      "validate",
      "--client-id",
      CLIENT,
      "--issuer",
      "http://127.0.0.1:1",
      await fresh("RS256", "http://127.0.0.1:1"),
    ]);
    expect(r.exit).toBe(2);
    expect(r.err).toContain("keys_unavailable");
  });

  it.each([
    [[]],
    [["validate"]],
    [["validate", "--issuer", ISS, "tok"]],
    [["validate", "--client-id", CLIENT, "tok"]],
    [["validate", "--client-id", CLIENT, "--issuer", ISS]],
    [["validate", "--client-id", CLIENT, "--issuer", ISS, "a", "b"]],
    [["validate", "--bogus", "--client-id", CLIENT, "--issuer", ISS, "tok"]],
    [["check", "--client-id", CLIENT, "--issuer", ISS, "tok"]],
    [["validate", "--client-id", CLIENT, "--issuer", "not-a-url", "tok"]],
  ])("usage error %j: exit 2 with usage", async (argv) => {
    const r = await cli(argv);
    expect(r.exit).toBe(2);
    // An unknown option is one line pointing to --help; the other usage errors show the usage line.
    expect(r.err).toMatch(
      /usage: portier id-token \[options\] validate ID-TOKEN|portier id-token --help lists the options/,
    );
  });

  it("--help prints usage, exit 0", async () => {
    const r = await cli(["--help"]);
    expect(r.exit).toBe(0);
    expect(r.out).toContain("usage: portier id-token");
    expect(r.out).toMatch(/--jwks FILE\|URL +the issuer's keys instead of discovery \(default: discovery\)/);
  });
});
