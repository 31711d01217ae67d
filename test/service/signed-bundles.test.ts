/**
 * `portier serve --verification-key`: an unsigned bundle is a one-line start-up failure of the real process, a
 * bad key file a start-up failure in this process; a tampered or unsigned reload (file or --bundle-url) is refused
 * while the
 * old bundle keeps serving, and /ready and metrics show the refusal (asked over an in-memory connection:
 * inject.ts).
 */
import { afterEach, describe, expect, it } from "vitest";
import { generateKeyPairSync } from "node:crypto";
import { renameSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { join } from "node:path";
import { bundleWithRevision } from "./bundles.js";
import { ISSUER, makeKeys, runServe, tempDir, until } from "./helpers.js";
import { serveInjected, type InjectedService, type Injector } from "./inject.js";
import { signBundle, tarOf } from "../../src/toolchain/sign-bundle.js";
import { inflateAndUntar } from "../../src/engine/index.js";
import { json, type ReadyJson } from "../support/answers.js";

const running: InjectedService[] = [];
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => (s.closeAllConnections(), s.close(r)))));
});

const signing = generateKeyPairSync("rsa", {
  modulusLength: 2048,
  publicKeyEncoding: { type: "spki", format: "pem" },
  privateKeyEncoding: { type: "pkcs8", format: "pem" },
});

async function setup() {
  const keys = await makeKeys();
  const dir = tempDir();
  const jwks = join(dir, "jwks.json");
  writeFileSync(jwks, JSON.stringify(keys.jwks));
  const pub = join(dir, "bundle-pub.pem");
  writeFileSync(pub, signing.publicKey);
  return { dir, jwks, pub, base: ["--issuer", ISSUER, "--jwks", jwks, "--verification-key", pub, "--no-directory"] };
}

const signed = async (revision: string) => signBundle(await bundleWithRevision(revision), signing.privateKey);

/** A signed bundle whose data.json was changed after signing. */
async function tampered(revision: string): Promise<Buffer> {
  const files = await inflateAndUntar(await signed(revision), "t", 1e9);
  files.set(
    "/data.json",
    Buffer.from(JSON.stringify({ ...JSON.parse(files.get("/data.json")!.toString()), tampered: true })),
  );
  return gzipSync(await tarOf(files));
}

function replace(file: string, bytes: Buffer): void {
  writeFileSync(`${file}.tmp`, bytes);
  renameSync(`${file}.tmp`, file);
}

const ready = async (svc: Injector) => json<ReadyJson>(await svc.fetch("/ready"));
const failedMetric = async (svc: Injector) =>
  /^portier_policy_last_load_failed (\d)/m.exec(await (await svc.fetch("/metrics")).text())?.[1];

describe("serve --verification-key", () => {
  it("refuses an unsigned bundle at start with one line naming the file", async () => {
    const { dir, base } = await setup();
    const bundle = join(dir, "b.tar.gz");
    writeFileSync(bundle, await bundleWithRevision("unsigned"));
    const r = await runServe([...base, "--bundle", bundle, "--port", "0"]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain(`${bundle}: bundle signature: the bundle is unsigned`);
  }, 60_000);

  // In process: the message (the line and exit code of a start-up failure are the test above).
  it("refuses a key file that is not a public key, at start", async () => {
    const { dir, jwks } = await setup();
    const bad = join(dir, "priv.pem");
    writeFileSync(bad, "garbage");
    await expect(
      serveInjected(["--issuer", ISSUER, "--jwks", jwks, "--no-directory", "--verification-key", bad]),
    ).rejects.toThrow(/config\.verificationKey: .*priv\.pem: not a PEM public key/);
  }, 60_000);

  it("refuses a tampered reload of the file while the old bundle serves; a good one then goes live", async () => {
    const { dir, base } = await setup();
    const bundle = join(dir, "b.tar.gz");
    writeFileSync(bundle, await signed("signed-1"));
    const svc = await serveInjected([...base, "--bundle", bundle]);
    running.push(svc);
    expect((await ready(svc)).policy.revision).toBe("signed-1");
    expect(await failedMetric(svc)).toBe("0");

    replace(bundle, await tampered("signed-2"));
    await until(
      async () => /file \/data\.json does not match its signed hash/.test((await ready(svc)).policy.lastError ?? ""),
      20_000,
    );
    const r = await ready(svc);
    expect(r.policy.revision).toBe("signed-1");
    expect(await failedMetric(svc)).toBe("1");
    expect((await svc.fetch(`/health`)).status).toBe(200);

    replace(bundle, await signed("signed-3"));
    await until(async () => (await ready(svc)).policy.revision === "signed-3", 20_000);
    expect(await failedMetric(svc)).toBe("0");
  }, 90_000);

  it("refuses an unsigned bundle from --bundle-url while the old one serves", async () => {
    const { base } = await setup();
    const good = await signed("url-signed");
    const unsigned = await bundleWithRevision("url-unsigned");
    let serveUnsigned = false;
    const server = createServer((req, res) => {
      if (serveUnsigned) return res.writeHead(200, { etag: '"u"' }).end(unsigned);
      if (req.headers["if-none-match"] === '"g"') return res.writeHead(304).end();
      res.writeHead(200, { etag: '"g"' }).end(good);
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/b.tar.gz`;
    const svc = await serveInjected([...base, "--bundle-url", url, "--bundle-poll-seconds", "0.2"]);
    running.push(svc);
    expect((await ready(svc)).policy.revision).toBe("url-signed");
    serveUnsigned = true;
    await until(
      async () => /bundle signature: the bundle is unsigned/.test((await ready(svc)).policy.lastError ?? ""),
      20_000,
    );
    expect((await ready(svc)).policy.revision).toBe("url-signed");
    expect(await failedMetric(svc)).toBe("1");
  }, 90_000);
});
