/**
 * Issue 17 item 2, the bundle: no proper prefix of a bundle .tar.gz loads. gzip ends with the CRC-32 and the
 * length of what it holds, so zlib refuses any cut (inside the trailer too); the tar reader refuses a cut
 * archive. Every prefix within the last 512 bytes (the gzip trailer and the tar end blocks) is tried, and 100 spread
 * over the rest.
 */
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { EngineLoadError } from "../../src/engine/index.js";
import { inflateAndUntar } from "../../src/engine/read-bundle.js";
import { requireBundle } from "../support/bundle.js";

describe("a truncated bundle", () => {
  it("every proper prefix is refused; the whole bundle reads", async () => {
    const bytes = readFileSync(requireBundle());
    expect((await inflateAndUntar(bytes, "b", 64 * 1024 * 1024)).size).toBeGreaterThan(0);
    const cuts = new Set<number>();
    for (let n = Math.max(0, bytes.length - 512); n < bytes.length; n++) cuts.add(n);
    for (let i = 0; i < 100; i++) cuts.add(Math.floor((i * bytes.length) / 100));
    for (const n of cuts) {
      const err = await inflateAndUntar(bytes.subarray(0, n), "b", 64 * 1024 * 1024).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, `prefix of ${n} of ${bytes.length} bytes`).toBeInstanceOf(EngineLoadError);
    }
  }, 60_000);
});
