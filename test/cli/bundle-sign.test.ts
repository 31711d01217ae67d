/**
 * `portier bundle build --signing-key` and `portier bundle sign`: the bundle carries an OPA signature that
 * Portier's verifier accepts with the public key (and refuses with another); bad options are usage errors.
 */
import { describe, expect, it } from "vitest";
import { generateKeyPairSync } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { portierInProcess as portier, portierProcess, scratchProject } from "../support/cli.js";
import { loadEngine, parseVerificationKey } from "../../src/engine/index.js";
import { DEFAULT_BUNDLE } from "../../src/service/config.js";

const pair = () =>
  generateKeyPairSync("ec", {
    namedCurve: "P-256",
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
const keys = pair();
const other = pair();
const verifies = (file: string, pub: string) =>
  loadEngine(readFileSync(file), { verificationKey: parseVerificationKey(pub, "pub.pem", "ES256") }).then(
    () => "ok",
    (e: unknown) => (e as Error).message,
  );

describe("portier bundle --signing-key", () => {
  it("build --signing-key writes a bundle signed with the key (ES256)", async () => {
    const dir = scratchProject();
    writeFileSync(join(dir, "key.pem"), keys.privateKey);
    const out = join(dir, "b.tar.gz");
    const r = await portierProcess([
      "bundle",
      "build",
      "--project",
      dir,
      "--out",
      out,
      "--signing-key",
      join(dir, "key.pem"),
      "--signing-alg",
      "ES256",
    ]);
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/bundle ok: .*signed ES256/);
    expect(await verifies(out, keys.publicKey)).toBe("ok");
    expect(await verifies(out, other.publicKey)).toMatch(/does not verify/);
  }, 120_000);

  // In process (the test above runs the real process).
  it("sign signs a built bundle; an unknown algorithm or a missing key is a usage error", async () => {
    const dir = scratchProject();
    writeFileSync(join(dir, "key.pem"), keys.privateKey);
    const out = join(dir, "signed.tar.gz");
    expect(
      (
        await portier([
          "bundle",
          "sign",
          "--signing-key",
          join(dir, "key.pem"),
          "--signing-alg",
          "ES256",
          "--out",
          out,
          DEFAULT_BUNDLE,
        ])
      ).code,
    ).toBe(0);
    expect(await verifies(out, keys.publicKey)).toBe("ok");
    const badAlg = await portier([
      "bundle",
      "sign",
      "--signing-key",
      join(dir, "key.pem"),
      "--signing-alg",
      "none",
      DEFAULT_BUNDLE,
    ]);
    expect(badAlg.code).toBe(2);
    expect(badAlg.stderr).toMatch(/--signing-alg: "none" is not one of/);
    const noKey = await portier(["bundle", "sign", DEFAULT_BUNDLE]);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/sign needs --signing-key FILE/);
  }, 120_000);
});
