/**
 * Test bundles: the project's bundle re-packed with another manifest revision, and broken bytes.
 */
import { readFileSync } from "node:fs";
import { gunzipSync, gzipSync } from "node:zlib";
import { extract } from "tar-stream";
import { Readable } from "node:stream";
import { DEFAULT_BUNDLE } from "../../src/service/config.js";
import { tarOf } from "../support/tar.js";

export const BUNDLE = DEFAULT_BUNDLE;

async function entries(tarBytes: Buffer): Promise<Record<string, Buffer>> {
  const out: Record<string, Buffer> = {};
  const ex = extract();
  const done = new Promise<void>((resolve, reject) => {
    ex.on("entry", (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on("data", (c: unknown) => chunks.push(c as Buffer));
      stream.on("end", () => {
        if (header.type === "file") out[header.name] = Buffer.concat(chunks);
        next();
      });
      stream.resume();
    });
    ex.on("finish", resolve);
    ex.on("error", reject);
  });
  Readable.from([tarBytes]).pipe(ex);
  await done;
  return out;
}

/** The project's bundle with its manifest revision set to `revision`. */
export async function bundleWithRevision(revision: string): Promise<Buffer> {
  const files = await entries(gunzipSync(readFileSync(BUNDLE)));
  const manifestName = Object.keys(files).find((n) => n.replace(/^\//, "") === ".manifest");
  if (!manifestName) throw new Error("bundle has no .manifest");
  const manifest = JSON.parse(files[manifestName]!.toString()) as Record<string, unknown>;
  files[manifestName] = Buffer.from(JSON.stringify({ ...manifest, revision }));
  return gzipSync(tarOf(files));
}

export const BROKEN_BUNDLE = gzipSync(Buffer.from("this is not a tar archive"));
