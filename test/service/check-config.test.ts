/**
 * `portier serve --check-config`: loads what start-up loads and exits with one line; a file start-up would refuse
 * gives the very line start-up prints (and exit 2, as start-up does), a configuration error exit 2, and no port is
 * bound.
 */
import { writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { makeKeys, RECORDS, runServe, sampleServeArgs, tempDir, type Keys } from "./helpers.js";

describe("portier serve --check-config", () => {
  let keys: Keys;
  beforeAll(async () => {
    keys = await makeKeys();
  });

  it("prints one line naming what it loaded and exits 0, binding no port", async () => {
    // The port is taken: start-up would fail to listen there, the check does not try.
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as AddressInfo).port;
    const r = await runServe([...sampleServeArgs(keys), "--port", String(port), "--check-config"]).finally(() =>
      taken.close(),
    );
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(
      new RegExp(
        String.raw`^portier serve: configuration ok: bundle [0-9a-f]+ from \S+bundle\.tar\.gz, 1 key\(s\) from ` +
          String.raw`\S+jwks\.json, ` +
          String.raw`directory ${RECORDS.length} record\(s\) from \S+directory\.json \(ports not bound\)\n$`,
      ),
    );
    expect(r.code).toBe(0);
  });

  it.each([
    ["a missing directory file", (dir: string) => ["--directory", join(dir, "missing.json")]],
    [
      "a broken directory file",
      (dir: string) => {
        writeFileSync(join(dir, "broken.json"), "[{");
        return ["--directory", join(dir, "broken.json")];
      },
    ],
    [
      "a broken bundle",
      (dir: string) => {
        writeFileSync(join(dir, "bundle.tar.gz"), "not a bundle");
        return ["--bundle", join(dir, "bundle.tar.gz")];
      },
    ],
    [
      "a broken JWKS file",
      (dir: string) => {
        writeFileSync(join(dir, "jwks.json"), "{");
        return ["--jwks", join(dir, "jwks.json")];
      },
    ],
  ])("refuses %s with the line start-up prints, exit 2", async (_what, args) => {
    const broken = [...sampleServeArgs(keys), ...args(tempDir()), "--port", "0", "--workers", "1"];
    const check = await runServe([...broken, "--check-config"]);
    const start = await runServe(broken);
    expect(start.code).toBe(2);
    expect(start.stderr).toMatch(/^portier serve: config\.\w+: .+\n$/);
    expect(check.stderr).toBe(start.stderr);
    expect(check.stdout).toBe("");
    expect(check.code).toBe(2);
  });

  it("reports a configuration error as start-up does, exit 2", async () => {
    const r = await runServe([...sampleServeArgs(keys), "--port", "http", "--check-config"]);
    expect(r.stderr).toMatch(/^portier serve: config\.port: must be integer \(from --port "http"\)\n/);
    expect(r.code).toBe(2);
  });
});
