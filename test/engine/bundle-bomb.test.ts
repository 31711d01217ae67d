/**
 * Bundle bombs: the inflated size is capped while inflating (default 64 MiB, or the maxBytes option),
 * so a small gzip that would inflate to far more is refused with bundle_too_large; a file bigger than the
 * cap is refused before it is read.
 */
import { createGzip } from "node:zlib";
import { describe, expect, it } from "vitest";
import { loadEngine, EngineLoadError, DEFAULT_MAX_BUNDLE_BYTES } from "../../src/engine/index.js";
import { requireBundle } from "../support/bundle.js";
import { tarOf } from "../support/tar.js";

/** A gzipped tar whose /data.json declares and holds `size` bytes of spaces, built without holding them. */
async function bomb(size: number): Promise<Buffer> {
  const header = tarOf({ "/data.json": "" }).subarray(0, 512);
  header.write(size.toString(8).padStart(11, "0") + "\0", 124);
  header.write("        ", 148);
  let sum = 0;
  for (const b of header) sum += b;
  header.write(sum.toString(8).padStart(6, "0") + "\0 ", 148);
  const gz = createGzip({ level: 9 });
  const out: Buffer[] = [];
  gz.on("data", (c: Buffer) => out.push(c));
  const done = new Promise((r) => gz.on("end", r));
  gz.write(header);
  const chunk = Buffer.alloc(1 << 20, 0x20);
  for (let left = size; left > 0; left -= chunk.length) {
    if (!gz.write(left >= chunk.length ? chunk : chunk.subarray(0, left)))
      await new Promise((r) => gz.once("drain", r));
  }
  gz.end();
  await done;
  return Buffer.concat(out);
}

describe("bundle size cap", () => {
  it("refuses a bomb over the default cap while inflating it", async () => {
    const bytes = await bomb(DEFAULT_MAX_BUNDLE_BYTES * 2);
    expect(bytes.length).toBeLessThan(1024 * 1024);
    const err = await loadEngine(bytes, { source: "bomb.tar.gz" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EngineLoadError);
    expect((err as EngineLoadError).code).toBe("bundle_too_large");
    expect((err as Error).message).toBe(
      `bomb.tar.gz: inflates to more than ${DEFAULT_MAX_BUNDLE_BYTES} bytes, the limit (--bundle-max-bytes)`,
    );
  }, 60_000);

  it("honours a smaller cap given as maxBytes", async () => {
    const err = await loadEngine(await bomb(4 * 1024 * 1024), { source: "b.tar.gz", maxBytes: 1024 * 1024 }).catch(
      (e: unknown) => e,
    );
    expect((err as EngineLoadError).code).toBe("bundle_too_large");
    expect((err as Error).message).toContain("more than 1048576 bytes");
  });

  it("refuses a bundle file bigger than the cap before reading it; the real bundle fits the default", async () => {
    const err = await loadEngine(requireBundle(), { maxBytes: 1024 }).catch((e: unknown) => e);
    expect((err as EngineLoadError).code).toBe("bundle_too_large");
    expect((err as Error).message).toMatch(/: larger than 1024 bytes, the limit \(--bundle-max-bytes\)$/);
    const engine = await loadEngine(requireBundle());
    expect(engine.revision).toBeTruthy();
  });

  it("counts bytes after the end of the tar towards the cap", async () => {
    const tar = tarOf({ "/.manifest": "{}" });
    const gz = createGzip();
    const out: Buffer[] = [];
    gz.on("data", (c: Buffer) => out.push(c));
    const done = new Promise((r) => gz.on("end", r));
    gz.end(Buffer.concat([tar, Buffer.alloc(2 * 1024 * 1024)]));
    await done;
    const err = await loadEngine(Buffer.concat(out), { source: "tail.tar.gz", maxBytes: 1024 * 1024 }).catch(
      (e: unknown) => e,
    );
    expect((err as EngineLoadError).code).toBe("bundle_too_large");
  });
});
