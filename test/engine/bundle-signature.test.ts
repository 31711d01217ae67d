/**
 * Bundle signatures in OPA's format: Portier's verifier refuses unsigned, tampered, incomplete and
 * wrongly signed bundles; bundles signed by `opa build --signing-key` load in Portier, and bundles signed
 * by Portier are accepted by `opa run --verification-key` (and a tampered one is refused by it).
 */
import { describe, expect, it, beforeAll } from "vitest";
import { generateKeyPairSync, createPublicKey } from "node:crypto";
import { spawn, execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { loadEngine, inflateAndUntar, parseVerificationKey, canonicalJson } from "../../src/engine/index.js";
import { signBundle, tarOf } from "../../src/toolchain/sign-bundle.js";
import { opaPath } from "../../src/toolchain/opa.js";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { stopChild } from "../support/stop-child.js";
import { DEFAULT_BUNDLE } from "../../src/service/config.js";
import { freePort } from "../support/free-port.js";

/** The first compact JWS of a bundle's /.signatures.json. */
const signatureOf = (files: Map<string, Buffer>) =>
  (JSON.parse(files.get("/.signatures.json")!.toString()) as { signatures: string[] }).signatures[0]!;

const rsa = () =>
  generateKeyPairSync("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
const keys = rsa();
const otherKeys = rsa();
const pub = parseVerificationKey(keys.publicKey, "pub.pem");
const dir = mkdtempSync(join(tmpdir(), "portier-sig-"));
const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");

async function repack(bundle: Uint8Array, edit: (files: Map<string, Buffer>) => void): Promise<Buffer> {
  const files = await inflateAndUntar(bundle, "test", 1e9);
  edit(files);
  return gzipSync(await tarOf(files));
}

const loadError = (bytes: Uint8Array, key = pub) =>
  loadEngine(bytes, { source: "b.tar.gz", verificationKey: key }).then(
    () => "loaded",
    (e: unknown) => (e as Error).message,
  );

let signed: Buffer;
beforeAll(async () => {
  signed = await signBundle(readFileSync(DEFAULT_BUNDLE), keys.privateKey);
});

describe("verifyBundleSignature (through loadEngine)", () => {
  it("loads a bundle Portier signed", async () => {
    const engine = await loadEngine(signed, { verificationKey: pub });
    expect(engine.revision).toMatch(/\w/);
  });

  const someRego = (files: Map<string, Buffer>) => [...files.keys()].find((n) => n.endsWith(".rego")) as string;
  const rows: [string, (files: Map<string, Buffer>) => void, RegExp][] = [
    ["unsigned", (f) => f.delete("/.signatures.json"), /b\.tar\.gz: bundle signature: the bundle is unsigned/],
    [
      "tampered data.json",
      (f) =>
        f.set(
          "/data.json",
          Buffer.from(JSON.stringify({ ...JSON.parse(f.get("/data.json")!.toString()), tampered: true })),
        ),
      /file \/data\.json does not match its signed hash/,
    ],
    [
      "tampered wasm",
      (f) => f.set("/policy.wasm", Buffer.concat([f.get("/policy.wasm")!, Buffer.from([0])])),
      /file \/policy\.wasm does not match/,
    ],
    [
      "an extra file",
      (f) => f.set("/extra.rego", Buffer.from("package extra\n")),
      /file \/extra\.rego is not included in the signature/,
    ],
    ["a missing file", (f) => f.delete(someRego(f)), /signed file\(s\) missing from the bundle: \/.*\.rego/],
    [
      "two signatures",
      (f) =>
        f.set(
          "/.signatures.json",
          Buffer.from(
            JSON.stringify({
              signatures: [1, 2].map(() => signatureOf(f)),
            }),
          ),
        ),
      /one compact JWS/,
    ],
    [
      "alg none",
      (f) => {
        const [, payload] = signatureOf(f).split(".");
        f.set(
          "/.signatures.json",
          Buffer.from(JSON.stringify({ signatures: [`${b64({ alg: "none", kid: "default" })}.${payload}.`] })),
        );
      },
      /does not verify with the verification key/,
    ],
  ];
  it.each(rows)("refuses %s, naming the problem", async (_name, edit, message) => {
    expect(await loadError(await repack(signed, edit))).toMatch(message);
  });

  it(
    "refuses data.json whose hash was replaced in an " + "unsigned payload (HS256 with the public key as secret)",
    async () => {
      const { CompactSign } = await import("jose");
      const forged = await repack(signed, (f) => f.set("/.signatures.json", Buffer.from("{}")));
      const files = await inflateAndUntar(signed, "t", 1e9);
      const payload = Buffer.from(signatureOf(files).split(".")[1]!, "base64url");
      const jws = await new CompactSign(payload)
        .setProtectedHeader({ alg: "HS256", kid: "default" })
        .sign(Buffer.from(keys.publicKey));
      const hs = await repack(forged, (f) =>
        f.set("/.signatures.json", Buffer.from(JSON.stringify({ signatures: [jws] }))),
      );
      expect(await loadError(hs)).toMatch(/does not verify with the verification key/);
    },
  );

  it("refuses a bundle signed with another key", async () => {
    expect(await loadError(await signBundle(readFileSync(DEFAULT_BUNDLE), otherKeys.privateKey))).toMatch(
      /does not verify with the verification key/,
    );
  });

  it("accepts a JWKS holding the key under kid default, and refuses one with only another key", async () => {
    const jwk = { ...createPublicKey(keys.publicKey).export({ format: "jwk" }), kid: "default", alg: "RS256" };
    expect(await loadError(signed, parseVerificationKey(JSON.stringify({ keys: [jwk] }), "jwks.json"))).toBe("loaded");
    const other = { ...createPublicKey(otherKeys.publicKey).export({ format: "jwk" }), kid: "default", alg: "RS256" };
    expect(await loadError(signed, parseVerificationKey(JSON.stringify({ keys: [other] }), "jwks.json"))).toMatch(
      /does not verify/,
    );
  });

  // Issue 17 item 9: a key that signs for several scopes must not load another scope's policy.
  describe("a signed payload with a scope", () => {
    /** The bundle re-signed by the right key over its own payload with `scope` set (or removed when undefined). */
    const withScope = async (scope: unknown) => {
      const { CompactSign, importPKCS8 } = await import("jose");
      const files = await inflateAndUntar(signed, "t", 1e9);
      const payload = JSON.parse(Buffer.from(signatureOf(files).split(".")[1]!, "base64url").toString()) as Record<
        string,
        unknown
      >;
      const jws = await new CompactSign(Buffer.from(JSON.stringify({ ...payload, scope })))
        .setProtectedHeader({ alg: "RS256", kid: "default" })
        .sign(await importPKCS8(keys.privateKey, "RS256"));
      return repack(signed, (f) => f.set("/.signatures.json", Buffer.from(JSON.stringify({ signatures: [jws] }))));
    };
    it.each([
      { scope: "read", message: /the signature has scope "read"; Portier verifies only unscoped signatures/ },
      { scope: ["write"], message: /the signature has scope \["write"\]/ },
      { scope: "*", message: /the signature has scope "\*"/ },
    ])("refuses scope $scope though the signature is valid", async ({ scope, message }) => {
      expect(await loadError(await withScope(scope))).toMatch(message);
    });
    it.each([{ scope: "" }, { scope: undefined }])(
      "loads an empty or absent scope ($scope), re-signed the same way",
      async ({ scope }) => {
        expect(await loadError(await withScope(scope))).toBe("loaded");
      },
    );
  });

  // Issue 17 item 9: a PEM key carries no algorithm; it verifies only with --verification-alg (default RS256).
  it.each([
    { signedWith: "PS256", verifyAlg: undefined, result: /does not verify with the verification key/ },
    { signedWith: "PS256", verifyAlg: "RS256", result: /does not verify with the verification key/ },
    { signedWith: "PS256", verifyAlg: "PS256", result: "loaded" },
    { signedWith: "RS256", verifyAlg: "PS256", result: /does not verify with the verification key/ },
    { signedWith: "RS512", verifyAlg: "RS256", result: /does not verify with the verification key/ },
    { signedWith: "RS512", verifyAlg: "RS512", result: "loaded" },
  ])(
    "a PEM key with --verification-alg $verifyAlg and a bundle signed $signedWith: $result",
    async ({ signedWith, verifyAlg, result }) => {
      const bundle = await signBundle(readFileSync(DEFAULT_BUNDLE), keys.privateKey, signedWith);
      const outcome = await loadError(bundle, parseVerificationKey(keys.publicKey, "pub.pem", verifyAlg));
      if (typeof result === "string") expect(outcome).toBe(result);
      else expect(outcome).toMatch(result);
    },
  );

  it("refuses a private key or an unknown algorithm as verification key, naming the file", () => {
    expect(() =>
      parseVerificationKey(
        JSON.stringify({
          keys: [createPublicKey(keys.publicKey).export({ format: "jwk" })].map((k) => ({ ...k, d: "x" })),
        }),
        "k.json",
      ),
    ).toThrow(/k\.json: keys\[0\] must be a public key/);
    expect(() => parseVerificationKey("not a key", "k.pem")).toThrow(/k\.pem: not a PEM public key/);
    expect(() => parseVerificationKey(keys.publicKey, "k.pem", "none")).toThrow(/k\.pem: signing algorithm "none"/);
  });

  it("loads without a verification key as before, signed or not", async () => {
    expect((await loadEngine(readFileSync(DEFAULT_BUNDLE))).revision).toMatch(/\w/);
  });
});

describe("canonicalJson (OPA's hash input for JSON files)", () => {
  it.each([
    ['{ "b": 1.0, "a": [2, 1e5, -0.50] }', '{"a":[2,1e5,-0.50],"b":1.0}'],
    ['{"é":1,"z":2,"B":3,"":4}', '{"":4,"B":3,"z":2,"é":1}'],
    ['"<&>\\u2028\\u0001\\/"', '"<&>\\u2028\\u0001/"'],
    ['{"a":1,"a":2}', '{"a":2}'],
  ])("%s -> %s", (input, want) => {
    expect(canonicalJson(input, "x")).toBe(want);
  });
  it("names the position of a syntax error", () => {
    expect(() => canonicalJson('{"a":tru}', "/data.json")).toThrow(/\/data\.json: invalid JSON at position 5/);
  });
});

/**
 * Runs `opa run --server --verification-key` on the bundle: "healthy" once GET /health?bundles answers 200, else opa's
 * output.
 */
async function opaRun(bundle: string, pubFile: string): Promise<string> {
  const port = await freePort();
  const proc = spawn(
    opaPath(),
    ["run", "--server", "--addr", `127.0.0.1:${port}`, "--verification-key", pubFile, "--bundle", bundle],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  proc.stdout.on("data", (c: Buffer) => (output += c.toString()));
  proc.stderr.on("data", (c: Buffer) => (output += c.toString()));
  let exited = false;
  proc.on("exit", () => (exited = true));
  try {
    for (let i = 0; i < 100 && !exited; i++) {
      const status = await fetch(`http://127.0.0.1:${port}/health?bundles`).then(
        (r) => r.status,
        () => 0,
      );
      if (status === 200) return "healthy";
      await new Promise((r) => setTimeout(r, 100));
    }
    return `not healthy: ${output}`;
  } finally {
    await stopChild(proc);
  }
}

describe("interoperability with the pinned opa", () => {
  it("a bundle signed by opa build --signing-key loads in Portier, and not with another key", async () => {
    const src = join(dir, "opa-src");
    cpSync(join(PROJECT_ROOT, "policies"), join(src, "policies"), { recursive: true });
    const data = JSON.parse(
      readFileSync(join(PROJECT_ROOT, "build", "bundle-data", "catalog", "data.json"), "utf8"),
    ) as unknown;
    mkdirSync(join(src, "catalog"), { recursive: true });
    writeFileSync(join(src, "catalog", "data.json"), JSON.stringify(data, null, 2));
    writeFileSync(join(dir, "key.pem"), keys.privateKey);
    const out = join(dir, "opa-signed.tar.gz");
    const entrypoints = ["portier/catalog", "portier/decision", "portier/explain/checks"].flatMap((e) => ["-e", e]);
    execFileSync(
      opaPath(),
      [
        "build",
        "-b",
        "-t",
        "wasm",
        ...entrypoints,
        "--ignore",
        "*_test.rego",
        "--signing-key",
        join(dir, "key.pem"),
        "--signing-alg",
        "RS256",
        "-o",
        out,
        src,
      ],
      { stdio: "pipe" },
    );
    expect(await loadError(readFileSync(out))).toBe("loaded");
    expect(await loadError(readFileSync(out), parseVerificationKey(otherKeys.publicKey, "other.pem"))).toMatch(
      /does not verify/,
    );
  });

  it("a bundle signed by Portier passes opa run --verification-key; a tampered one does not start", async () => {
    // A rego bundle (the pinned opa runs no wasm) whose JSON opa hashes canonically: odd order, spacing, numbers.
    const files = new Map<string, Buffer>([
      ["/x/policy.rego", Buffer.from("package x\n\nallow if data.x.n == 1.0\n")],
      [
        "/x/data.json",
        Buffer.from('{ "n": 1.0, "s": "<&> \\u2028 é", "b": [3, 1e2, -0.5], "a": {"z": null, "y": true} }'),
      ],
      ["/.manifest", Buffer.from('{"roots": ["x"], "revision": "r1"}')],
    ]);
    const good = join(dir, "portier-signed.tar.gz");
    writeFileSync(good, await signBundle(gzipSync(await tarOf(files)), keys.privateKey));
    writeFileSync(join(dir, "pub.pem"), keys.publicKey);
    expect(await opaRun(good, join(dir, "pub.pem"))).toBe("healthy");

    const tampered = join(dir, "tampered.tar.gz");
    writeFileSync(tampered, await repack(readFileSync(good), (f) => f.set("/x/data.json", Buffer.from('{"n": 2}'))));
    expect(await opaRun(tampered, join(dir, "pub.pem"))).toMatch(/not healthy: .*digest mismatch/s);
  }, 30_000);
});
