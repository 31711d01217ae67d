/**
 * Reads an OPA bundle as `opa build -t wasm` writes it: a gzipped tar holding /policy.wasm,
 * /data.json and /.manifest. Checks the manifest names the wasm module and the entrypoints we need.
 */
import { createGunzip } from "node:zlib";
import { createHash } from "node:crypto";
import { extract } from "tar-stream";
import { messageOf } from "../errors/caught.js";
import { EngineLoadError } from "./errors.js";
import { verifyBundleSignature, type VerificationKey } from "./bundle-signature.js";

export interface BundleManifest {
  revision?: string;
  roots?: string[];
  rego_version?: number;
  wasm?: { entrypoint: string; module: string }[];
  metadata?: Record<string, unknown>;
}

export interface Bundle {
  manifest: BundleManifest;
  wasm: Uint8Array;
  data: Record<string, unknown>;
  /** Manifest revision, or the first 12 hex digits of the bundle's SHA-256 when it has none. */
  revision: string;
  entrypoints: string[];
}

export interface ReadBundleOptions {
  /** Cap on the inflated (uncompressed) size, checked while inflating. Default 64 MiB. */
  maxBytes?: number;
  /** When set, the bundle must carry an OPA signature (/.signatures.json) that verifies with this key. */
  verificationKey?: VerificationKey | undefined;
}

export const DEFAULT_MAX_BUNDLE_BYTES = 64 * 1024 * 1024;

/**
 * Inflates and untars as one stream: zlib works off the main thread in 256 KiB steps and the event loop
 * runs between them; the count of inflated bytes is checked at every step, so a bomb is refused as soon
 * as it passes the cap, with at most the cap in memory.
 */
export function inflateAndUntar(gz: Uint8Array, source: string, maxBytes: number): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  const gunzip = createGunzip({ chunkSize: 256 * 1024 });
  const ex = extract();
  let inflated = 0;
  let tarDone = false;
  let gzipDone = false;
  return new Promise<Map<string, Buffer>>((resolve, reject) => {
    let settled = false;
    const fail = (err: EngineLoadError) => {
      if (settled) return;
      settled = true;
      gunzip.destroy();
      ex.destroy();
      reject(err);
    };
    const finishIfDone = () => {
      if (tarDone && gzipDone && !settled) {
        settled = true;
        resolve(files);
      }
    };
    gunzip.on("data", (chunk: Buffer) => {
      inflated += chunk.length;
      if (inflated > maxBytes) {
        fail(
          new EngineLoadError(
            "bundle_too_large",
            `${source}: inflates to more than ${maxBytes} bytes, the limit (--bundle-max-bytes)`,
          ),
        );
        return;
      }
      // Bytes after the tar's end still count towards the cap; they are not parsed.
      if (!tarDone && !ex.write(chunk)) gunzip.pause();
    });
    ex.on("drain", () => gunzip.resume());
    gunzip.on("end", () => {
      gzipDone = true;
      if (!tarDone) ex.end(() => undefined);
      finishIfDone();
    });
    gunzip.on("error", (err: Error) =>
      fail(new EngineLoadError("bundle_invalid", `${source}: not a gzip file (${err.message})`)),
    );
    ex.on("entry", (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: unknown) => chunks.push(chunk as Buffer));
      stream.on("end", () => {
        if (header.type === "file") files.set("/" + header.name.replace(/^\/+/, ""), Buffer.concat(chunks));
        next();
      });
      stream.on("error", (err: Error) =>
        fail(new EngineLoadError("bundle_invalid", `${source}: entry ${header.name}: ${err.message}`)),
      );
    });
    ex.on("finish", () => {
      tarDone = true;
      gunzip.resume();
      finishIfDone();
    });
    ex.on("error", (err: Error) =>
      fail(new EngineLoadError("bundle_invalid", `${source}: not a tar archive (${err.message})`)),
    );
    gunzip.end(gz);
  });
}

function parseJson(bytes: Buffer, what: string): unknown {
  try {
    return JSON.parse(bytes.toString("utf8"));
  } catch (err) {
    throw new EngineLoadError("bundle_invalid", `${what}: invalid JSON (${messageOf(err)})`);
  }
}

/** Parses bundle bytes; `source` names the file in error messages. */
export async function readBundle(
  bytes: Uint8Array,
  source: string,
  requiredEntrypoints: string[],
  options: ReadBundleOptions = {},
): Promise<Bundle> {
  const files = await inflateAndUntar(bytes, source, options.maxBytes ?? DEFAULT_MAX_BUNDLE_BYTES);
  if (options.verificationKey) await verifyBundleSignature(files, source, options.verificationKey);

  const manifestBytes = files.get("/.manifest");
  if (!manifestBytes)
    throw new EngineLoadError("manifest_invalid", `${source}: no /.manifest (build it with opa build -t wasm)`);
  const manifest = parseJson(manifestBytes, `${source}:/.manifest`) as BundleManifest;
  if (
    typeof manifest !== "object" ||
    manifest === null ||
    !Array.isArray(manifest.wasm) ||
    manifest.wasm.length === 0
  ) {
    throw new EngineLoadError(
      "manifest_invalid",
      `${source}:/.manifest: field "wasm" must list the compiled entrypoints (was this built with -t wasm?)`,
    );
  }
  const entrypoints = manifest.wasm.map((w) => w.entrypoint);
  for (const wanted of requiredEntrypoints) {
    if (!entrypoints.includes(wanted)) {
      throw new EngineLoadError(
        "entrypoint_missing",
        `${source}:/.manifest: entrypoint "${wanted}" is missing (has: ${entrypoints.join(", ") || "none"})`,
      );
    }
  }
  const modules = new Set(manifest.wasm.map((w) => w.module));
  if (modules.size !== 1)
    throw new EngineLoadError(
      "manifest_invalid",
      `${source}:/.manifest: expected one wasm module, found ${[...modules].join(", ")}`,
    );
  const modulePath = [...modules][0] as string;
  const wasm = files.get(modulePath);
  if (!wasm)
    throw new EngineLoadError(
      "bundle_invalid",
      `${source}: manifest names ${modulePath} but the bundle has no such file`,
    );

  const dataBytes = files.get("/data.json");
  const data = dataBytes ? parseJson(dataBytes, `${source}:/data.json`) : {};
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new EngineLoadError("data_invalid", `${source}:/data.json: the data document must be a JSON object`);
  }
  const revision = manifest.revision || createHash("sha256").update(bytes).digest("hex").slice(0, 12);
  return { manifest, wasm: new Uint8Array(wasm), data: data as Record<string, unknown>, revision, entrypoints };
}
