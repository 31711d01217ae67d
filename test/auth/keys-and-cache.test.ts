/**
 * Key lifecycle and the verified-token cache: discovery, jwksUri, local file, rotation, issuer outage,
 * refresh cooldown, cache hits, expiry of cached entries, invalidation when a key is removed, and verifyCached.
 */
import { describe, it, expect, afterEach } from "vitest";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { until } from "../support/until.js";
import { UNLOADED_RETRY_MS } from "../../src/auth/key-store.js";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAccessTokenVerifier, TokenError } from "../../src/auth/index.js";
import { refreshKeys, makeKey, sign, startIssuer, appClaims, userClaims, NOW } from "./helpers.js";

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0)) await f();
});

async function setup(opts: Record<string, unknown> = {}) {
  const k1 = await makeKey("k1");
  const issuer = await startIssuer([k1]);
  let now = NOW;
  const v = createAccessTokenVerifier({ issuer: issuer.url, now: () => now, ...opts });
  cleanup.push(
    () => v.close(),
    () => issuer.close(),
  );
  await v.ready();
  return { k1, issuer, v, setNow: (n: number) => (now = n) };
}

const code = (p: Promise<unknown>) =>
  p.then(
    () => "ok",
    (e: unknown) => (e instanceof TokenError ? e.code : `not a TokenError: ${String(e)}`),
  );

describe("key sources", () => {
  it("discovery finds jwks_uri and loads keys before ready()", async () => {
    const { issuer, v, k1 } = await setup();
    expect(issuer.discoveryHits).toBe(1);
    expect(v.status()).toMatchObject({ ready: true, keyCount: 1, refreshes: 1, refreshFailures: 0 });
    expect((await v.verify(await sign(appClaims(issuer.url), k1))).cached).toBe(false);
  });

  it("jwksUri skips discovery", async () => {
    const k1 = await makeKey("k1", "ES256");
    const issuer = await startIssuer([k1]);
    const v = createAccessTokenVerifier({ issuer: issuer.url, jwksUri: `${issuer.url}/jwks`, now: () => NOW });
    cleanup.push(
      () => v.close(),
      () => issuer.close(),
    );
    await v.ready();
    expect(issuer.discoveryHits).toBe(0);
    expect(await code(v.verify(await sign(appClaims(issuer.url), k1)))).toBe("ok");
  });

  it("a local JWKS file works offline", async () => {
    const k1 = await makeKey("k1", "PS256");
    const dir = mkdtempSync(join(tmpdir(), "portier-auth-"));
    const file = join(dir, "jwks.json");
    writeFileSync(file, JSON.stringify({ keys: [k1.publicJwk] }));
    const v = createAccessTokenVerifier({ issuer: "https://id.example", jwksFile: file, now: () => NOW });
    cleanup.push(() => v.close());
    await v.ready();
    expect(v.status().source).toBe(`file:${file}`);
    expect(await code(v.verify(await sign(appClaims("https://id.example"), k1)))).toBe("ok");
  });

  it("ready() rejects with keys_unavailable when the first load fails; verify says keys_unavailable", async () => {
    const issuer = await startIssuer([]);
    issuer.down = true;
    const v = createAccessTokenVerifier({ issuer: issuer.url, now: () => NOW });
    cleanup.push(
      () => v.close(),
      () => issuer.close(),
    );
    await expect(v.ready()).rejects.toMatchObject({ code: "keys_unavailable" });
    expect(v.status()).toMatchObject({ ready: false, refreshFailures: 1 });
    expect(v.status().lastError).toContain("503");
    const k = await makeKey("k1");
    expect(await code(v.verify(await sign(appClaims(issuer.url), k)))).toBe("keys_unavailable");
  });
});

describe("rotation, outage, cooldown", () => {
  it("a new key is fetched on its first kid; old tokens work until the old key is removed", async () => {
    const { issuer, v, k1 } = await setup({ refreshCooldownMs: 0 });
    const old = await sign(appClaims(issuer.url), k1);
    const k2 = await makeKey("k2", "ES256");
    issuer.keys = [k1, k2];
    expect(await code(v.verify(await sign(appClaims(issuer.url), k2)))).toBe("ok");
    expect(v.status().keyCount).toBe(2);
    expect(await code(v.verify(old))).toBe("ok");
    expect((await v.verify(old)).cached).toBe(true);
    issuer.keys = [k2];
    await refreshKeys(v);
    expect(v.status().keyCount).toBe(1);
    expect(await code(v.verify(old))).toBe("kid_unknown"); // cached entry dropped with its key
  });

  it("an unreachable issuer keeps the cached keys and reports the error", async () => {
    const { issuer, v, k1 } = await setup({ refreshCooldownMs: 0 });
    issuer.down = true;
    await refreshKeys(v);
    const s = v.status();
    expect(s).toMatchObject({ ready: true, keyCount: 1, refreshFailures: 1, refreshes: 1 });
    expect(s.lastError).toContain("503");
    expect(await code(v.verify(await sign(userClaims(issuer.url), k1)))).toBe("ok");
    // an unknown kid during the outage is still just unknown
    expect(await code(v.verify(await sign(appClaims(issuer.url), await makeKey("k9"))))).toBe("kid_unknown");
    issuer.down = false;
    await refreshKeys(v);
    expect(v.status().lastError).toBeUndefined();
  });

  it("unknown kids trigger at most one refresh per cooldown", async () => {
    const { issuer, v } = await setup({ refreshCooldownMs: 60_000 });
    const before = issuer.jwksHits;
    const stranger = await makeKey("nobody");
    for (let i = 0; i < 5; i++)
      expect(await code(v.verify(await sign(appClaims(issuer.url, { i }), stranger)))).toBe("kid_unknown");
    expect(issuer.jwksHits - before).toBe(1);
  });

  it("cooldown 0 refreshes for each unknown kid", async () => {
    const { issuer, v } = await setup({ refreshCooldownMs: 0 });
    const before = issuer.jwksHits;
    const stranger = await makeKey("nobody");
    for (let i = 0; i < 3; i++) await code(v.verify(await sign(appClaims(issuer.url, { i }), stranger)));
    expect(issuer.jwksHits - before).toBe(3);
  });
});

describe("verified-token cache", () => {
  it("second verify is a cache hit with the same claims", async () => {
    const { issuer, v, k1 } = await setup();
    const t = await sign(userClaims(issuer.url, { scope: "openid apiclients" }), k1);
    const a = await v.verify(t);
    const b = await v.verify(t);
    expect(a.cached).toBe(false);
    expect(b.cached).toBe(true);
    expect(b.claims).toEqual(a.claims);
  });

  it("a cached token still expires with the clock", async () => {
    const { issuer, v, k1, setNow } = await setup();
    const t = await sign(appClaims(issuer.url, { exp: NOW + 100 }), k1);
    await v.verify(t);
    setNow(NOW + 131);
    expect(await code(v.verify(t))).toBe("token_expired");
  });

  it("cacheSize 0 disables the cache", async () => {
    const { issuer, k1 } = await setup();
    const v0 = createAccessTokenVerifier({ issuer: issuer.url, now: () => NOW, cacheSize: 0 });
    cleanup.push(() => v0.close());
    await v0.ready();
    const t = await sign(appClaims(issuer.url), k1);
    expect((await v0.verify(t)).cached).toBe(false);
    expect((await v0.verify(t)).cached).toBe(false);
  });

  it("is bounded (LRU)", async () => {
    const { issuer, k1 } = await setup();
    const v2 = createAccessTokenVerifier({ issuer: issuer.url, now: () => NOW, cacheSize: 2 });
    cleanup.push(() => v2.close());
    await v2.ready();
    const [a, b, c] = await Promise.all([1, 2, 3].map((i) => sign(appClaims(issuer.url, { i }), k1)));
    await v2.verify(a!);
    await v2.verify(b!);
    await v2.verify(a!); // a most recent
    await v2.verify(c!); // evicts b
    expect((await v2.verify(a!)).cached).toBe(true);
    expect((await v2.verify(b!)).cached).toBe(false);
  });
});

describe("logging, background refresh, discovery checks", () => {
  it("a refresh failure is logged without any token text", async () => {
    const warnings: Array<[object, string | undefined]> = [];
    const { issuer, v } = await setup({
      refreshCooldownMs: 0,
      logger: { warn: (o: object, m?: string) => warnings.push([o, m]) },
    });
    issuer.down = true;
    await refreshKeys(v);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]![0]).toMatchObject({ event: "keys_refused", failures: 1, keyCount: 1 });
  });

  it("the background refresh notices a removed key without any unknown kid", async () => {
    const k1 = await makeKey("k1");
    const k2 = await makeKey("k2");
    const issuer = await startIssuer([k1, k2]);
    const v = createAccessTokenVerifier({ issuer: issuer.url, now: () => NOW, refreshIntervalMs: 50 });
    cleanup.push(
      () => v.close(),
      () => issuer.close(),
    );
    await v.ready();
    const t = await sign(appClaims(issuer.url), k1);
    expect((await v.verify(t)).cached).toBe(false);
    issuer.keys = [k2];
    await expect.poll(() => v.status().keyCount, { timeout: 2000 }).toBe(1);
    expect(await code(v.verify(t))).toBe("kid_unknown");
  });

  it("a discovery document naming another issuer is refused", async () => {
    const issuer = await startIssuer([await makeKey("k1")]);
    const v = createAccessTokenVerifier({ issuer: `${issuer.url}/`, now: () => NOW });
    cleanup.push(
      () => v.close(),
      () => issuer.close(),
    );
    await expect(v.ready()).rejects.toMatchObject({ code: "keys_unavailable" });
    expect(v.status().lastError).toMatch(/names the issuer \S+, not the configured issuer \S+/);
  });

  it("a discovery document whose issuer is not a string names it as JSON, not [object Object]", async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ issuer: { evil: 1 } }));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const v = createAccessTokenVerifier({ issuer: url, now: () => NOW });
    cleanup.push(
      () => v.close(),
      () => new Promise<void>((r) => server.close(() => r())),
    );
    await expect(v.ready()).rejects.toMatchObject({ code: "keys_unavailable" });
    expect(v.status().lastError).toContain(`names the issuer {"evil":1}, not the configured issuer ${url}`);
  });

  it("verified claims are frozen, so a caller cannot alter a cached answer", async () => {
    const { issuer, v, k1 } = await setup();
    const t = await sign(userClaims(issuer.url), k1);
    const a = await v.verify(t);
    expect(() => a.claims.scope.push("admin")).toThrow(TypeError);
    expect((await v.verify(t)).claims.scope).not.toContain("admin");
  });
});

describe("issuer never reachable", () => {
  it("requests do not each hit the issuer: one retry per cooldown", async () => {
    const issuer = await startIssuer([]);
    issuer.down = true;
    const v = createAccessTokenVerifier({ issuer: issuer.url, now: () => NOW, refreshCooldownMs: 60_000 });
    cleanup.push(
      () => v.close(),
      () => issuer.close(),
    );
    await v.ready().catch(() => {});
    const k = await makeKey("k1");
    const t = await sign(appClaims(issuer.url), k);
    const before = v.status().refreshFailures;
    for (let i = 0; i < 5; i++) expect(await code(v.verify(t))).toBe("keys_unavailable");
    // One attempt for the requests (cooldown), and at most one of the background retry (first after 1 s).
    expect(v.status().refreshFailures - before).toBeLessThanOrEqual(2);
  });
});

describe("keys without kid", () => {
  it("a token without kid verifies with the published key, and its cache entry goes with that key", async () => {
    const k = await makeKey("tmp");
    const { kid: _drop, ...noKid } = k.publicJwk;
    const other = await makeKey("k2");
    const issuer = await startIssuer([{ ...k, publicJwk: noKid }, other]);
    const v = createAccessTokenVerifier({ issuer: issuer.url, now: () => NOW, refreshCooldownMs: 0 });
    cleanup.push(
      () => v.close(),
      () => issuer.close(),
    );
    await v.ready();
    const { signRaw } = await import("./helpers.js");
    const t = await signRaw({ alg: "RS256", typ: "at+jwt" }, appClaims(issuer.url), k);
    expect((await v.verify(t)).cached).toBe(false);
    expect((await v.verify(t)).cached).toBe(true);
    issuer.keys = [other];
    await refreshKeys(v);
    expect(await code(v.verify(t))).toBe("signature_invalid");
  });
});

// The cache answers only what verification would: a token verified before, within its exp and the tolerance.
describe("the verified-token cache", () => {
  async function verified(opts: Record<string, unknown> = {}) {
    const s = await setup({ clockToleranceSec: 30, ...opts });
    const token = await sign(appClaims(s.issuer.url), s.k1);
    return { ...s, token, exp: appClaims(s.issuer.url).exp as number };
  }

  it("answers a token verified before from the cache, with the same claims", async () => {
    const { v, token } = await verified();
    const first = await v.verify(token);
    expect(first.cached).toBe(false);
    expect(await v.verify(token)).toEqual({ ...first, cached: true });
    expect(await code(v.verify(token + "x"))).not.toBe("ok");
  });

  it("answers token_expired once the token expired beyond the tolerance", async () => {
    const { v, token, exp, setNow } = await verified();
    await v.verify(token);
    setNow(exp + 29);
    expect((await v.verify(token)).cached).toBe(true);
    setNow(exp + 30);
    expect(await code(v.verify(token))).toBe("token_expired");
  });

  it("caches nothing with the cache off, and answers nothing once the verifier is closed", async () => {
    const off = await verified({ cacheSize: 0 });
    await off.v.verify(off.token);
    expect((await off.v.verify(off.token)).cached).toBe(false);
    const { v, token } = await verified();
    await v.verify(token);
    v.close();
    expect(await code(v.verify(token))).toBe("keys_unavailable");
  });
});

// Issue 17 item 5: while no key is loaded, a URL is retried on a short back-off (1 s doubling to 10 s), then no more.
describe("keys never loaded yet: retried on a short back-off", () => {
  it("attempts at about 0, 1 and 3 s (doubling, not every second), then loads at the next one", async () => {
    const k1 = await makeKey("k1");
    const state = { up: false, hits: [] as number[] };
    const server = createServer((_req, res) => {
      state.hits.push(Date.now());
      if (!state.up) return void res.writeHead(503).end();
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: [k1.publicJwk] }));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    cleanup.push(() => new Promise((r) => server.close(r)));
    const started = Date.now();
    const v = createAccessTokenVerifier({
      issuer: url,
      jwksUri: `${url}/jwks`,
      now: () => NOW,
      refreshIntervalMs: 300_000,
    });
    cleanup.push(() => v.close());
    // Observe the attempts over a window of 3.5 s (a measurement, not a wait for a condition).
    await new Promise((r) => setTimeout(r, 3_500));
    const offsets = state.hits.map((t) => t - started);
    // 0, ~1000, ~3000 ms; a fixed 1 s retry would have made four attempts, no retry one.
    expect(offsets.length, JSON.stringify(offsets)).toBeGreaterThanOrEqual(2);
    expect(offsets.length, JSON.stringify(offsets)).toBeLessThanOrEqual(3);
    expect(offsets[1]!, JSON.stringify(offsets)).toBeGreaterThanOrEqual(900);
    // The next retry (about 7 s after the start) loads the keys, long before the 300 s poll.
    state.up = true;
    await until(() => v.status().ready, UNLOADED_RETRY_MS.max + 2_000);
  }, 30_000);
});

describe("keys loaded at the first attempt", () => {
  it("no retry follows: the JWKS is fetched once until the poll or an unknown kid", async () => {
    const { issuer } = await setup({ refreshCooldownMs: 60_000 });
    const before = issuer.jwksHits;
    // Past the first retry's time (1 s): it must not fetch, since the keys loaded before it fired.
    await new Promise((r) => setTimeout(r, UNLOADED_RETRY_MS.first + 500));
    expect(issuer.jwksHits - before).toBe(0);
  });
});
