/**
 * Test bundles: the project's bundle re-packed with another manifest revision or an edited data document,
 * and broken bytes.
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
export function bundleWithRevision(revision: string): Promise<Buffer> {
  return bundleWithData(revision, () => undefined);
}

/** The project's bundle with its data document (/data.json) edited, under another manifest revision. */
export async function bundleWithData<T = unknown>(revision: string, edit: (data: T) => void): Promise<Buffer> {
  const files = await entries(gunzipSync(readFileSync(BUNDLE)));
  const find = (name: string) => Object.keys(files).find((n) => n.replace(/^\//, "") === name);
  const manifestName = find(".manifest");
  const dataName = find("data.json");
  if (!manifestName || !dataName) throw new Error("bundle has no .manifest or data.json");
  // The edit's parameter type says what it expects of the project's data document (a test's assertion).
  const data = JSON.parse(files[dataName]!.toString()) as T;
  edit(data);
  files[dataName] = Buffer.from(JSON.stringify(data));
  files[manifestName] = Buffer.from(
    JSON.stringify({ ...(JSON.parse(files[manifestName]!.toString()) as object), revision }),
  );
  return gzipSync(tarOf(files));
}

export const BROKEN_BUNDLE = gzipSync(Buffer.from("this is not a tar archive"));
