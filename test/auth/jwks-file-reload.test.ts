/**
 * A JWKS file is watched and re-read: a key removed from it stops verifying (its cached tokens go too)
 * near-instantly through the watch, and within the refresh interval when watch events are missed.
 */
import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAccessTokenVerifier, TokenError, type PortierAccessTokenVerifier } from "../../src/auth/index.js";
import { appClaims, makeKey, NOW, sign, type TestKey } from "./helpers.js";

const ISSUER = "https://id.example";
const open: PortierAccessTokenVerifier[] = [];
afterEach(() => open.splice(0).forEach((v) => v.close()));

const code = (p: Promise<unknown>) =>
  p.then(
    () => "ok",
    (e: unknown) => (e instanceof TokenError ? e.code : String(e)),
  );

function writeJwks(file: string, keys: TestKey[]): void {
  writeFileSync(`${file}.tmp`, JSON.stringify({ keys: keys.map((k) => k.publicJwk) }));
  renameSync(`${file}.tmp`, file);
}

describe("JWKS file rotation", () => {
  const modes: [string, { refreshIntervalMs: number; watchJwksFile: boolean }][] = [
    ["through the watch", { refreshIntervalMs: 0, watchJwksFile: true }],
    ["through the periodic re-read", { refreshIntervalMs: 100, watchJwksFile: false }],
  ];
  for (const [name, mode] of modes) {
    it(`a removed key stops verifying ${name}, cached tokens included`, async () => {
      const k1 = await makeKey("k1");
      const k2 = await makeKey("k2");
      const file = join(mkdtempSync(join(tmpdir(), "portier-jwks-")), "jwks.json");
      writeJwks(file, [k1, k2]);
      const v = createAccessTokenVerifier({
        issuer: ISSUER,
        jwksFile: file,
        now: () => NOW,
        ...mode,
        refreshCooldownMs: 60_000,
      });
      open.push(v);
      await v.ready();
      const t1 = await sign(appClaims(ISSUER), k1);
      const t2 = await sign(appClaims(ISSUER), k2);
      expect(await code(v.verify(t1))).toBe("ok");
      expect((await v.verify(t1)).cached).toBe(true);

      writeJwks(file, [k2]);
      await expect.poll(() => v.status().keyCount, { timeout: 5000 }).toBe(1);
      expect(await code(v.verify(t1))).toBe("kid_unknown");
      expect(await code(v.verify(await sign(appClaims(ISSUER, { jti: "new" }), k1)))).toBe("kid_unknown");
      expect(await code(v.verify(t2))).toBe("ok");
    });
  }

  it("a broken file keeps the last good keys and reports it; the next good file clears the error", async () => {
    const k1 = await makeKey("k1");
    const file = join(mkdtempSync(join(tmpdir(), "portier-jwks-")), "jwks.json");
    writeJwks(file, [k1]);
    const v = createAccessTokenVerifier({ issuer: ISSUER, jwksFile: file, now: () => NOW });
    open.push(v);
    await v.ready();
    writeFileSync(file, '{"keys": [');
    await expect.poll(() => v.status().lastError, { timeout: 5000 }).toMatch(/not valid JSON/);
    expect(await code(v.verify(await sign(appClaims(ISSUER), k1)))).toBe("ok");
    writeJwks(file, [k1]);
    await expect.poll(() => v.status().lastError, { timeout: 5000 }).toBeUndefined();
  });
});
