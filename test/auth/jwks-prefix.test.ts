/**
 * Issue 17 item 2, the keys: no proper prefix of a JWKS file loads (a JSON object is complete by its own
 * syntax: JSON.parse refuses every cut), so a key file written in place is never read half-written.
 */
import { afterEach, describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAccessTokenVerifier, type PortierAccessTokenVerifier } from "../../src/auth/index.js";
import { makeKey } from "./helpers.js";

const open: PortierAccessTokenVerifier[] = [];
afterEach(() => open.splice(0).forEach((v) => v.close()));

describe("a truncated JWKS file", () => {
  it("every proper prefix is refused; the whole file loads", async () => {
    const keys = [(await makeKey("k1")).publicJwk, (await makeKey("k2")).publicJwk];
    const text = `${JSON.stringify({ keys }, null, 1)}\n`;
    const file = join(mkdtempSync(join(tmpdir(), "portier-jwks-prefix-")), "jwks.json");
    const loads = async (content: string) => {
      writeFileSync(file, content);
      const v = createAccessTokenVerifier({
        issuer: "https://id.example",
        jwksFile: file,
        refreshIntervalMs: 0,
        watchJwksFile: false,
      });
      open.push(v);
      return v.ready().then(
        () => true,
        () => false,
      );
    };
    expect(await loads(text)).toBe(true);
    const end = text.trimEnd().length;
    for (let n = 0; n < end; n++) expect(await loads(text.slice(0, n)), `prefix of ${n} characters`).toBe(false);
  }, 60_000);
});
