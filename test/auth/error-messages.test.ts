/**
 * Error messages name the values involved: an issuer mismatch shows both issuers, a key fetch failure names
 * the URL (credentials redacted, as test/reload/redact-url.test.ts shows) and the cause.
 */
import { afterAll, describe, expect, it } from "vitest";
import { createServer } from "node:net";
import { createAccessTokenVerifier, TokenError } from "../../src/auth/index.js";
import { appClaims, makeKey, sign, startIssuer, NOW } from "./helpers.js";

const closers: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of closers) await c();
});

describe("error messages", () => {
  it("an issuer mismatch shows the token's issuer and the configured one", async () => {
    const key = await makeKey("k1");
    const issuer = await startIssuer([key]);
    const v = createAccessTokenVerifier({ issuer: issuer.url, now: () => NOW });
    closers.push(
      () => v.close(),
      () => issuer.close(),
    );
    await v.ready();
    const err = await v.verify(await sign(appClaims("https://other.example"), key)).then(
      () => undefined,
      (e: TokenError) => e,
    );
    expect(err).toBeInstanceOf(TokenError);
    expect(err?.code).toBe("issuer_mismatch");
    expect(err?.message).toBe(
      `the token was issued by https://other.example, not by the configured issuer ${issuer.url}`,
    );
  });

  it("a key fetch failure names the URL with its secrets redacted, and the cause", async () => {
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
    const port = (s.address() as { port: number }).port;
    await new Promise((r) => s.close(r));
    const v = createAccessTokenVerifier({
      issuer: "https://auth.example",
      jwksUri: `http://127.0.0.1:${port}/jwks?access_token=s3cret`,
    });
    closers.push(() => v.close());
    await expect(v.ready()).rejects.toBeInstanceOf(TokenError);
    const error = v.status().lastError ?? "";
    expect(error).toContain(`GET http://127.0.0.1:${port}/jwks?access_token=*** failed: ECONNREFUSED`);
    expect(error).not.toContain("s3cret");
  });
});
