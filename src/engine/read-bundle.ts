/**
 * Reads an OPA bundle as `opa build -t wasm` writes it: a gzipped tar holding /policy.wasm,
 * /data.json and /.manifest. Checks the manifest names the wasm module and the entrypoints we need.
 */
import { gunzipSync } from "node:zlib";
import { createHash } from "node:crypto";
import { extract } from "tar-stream";
import { EngineLoadError } from "./errors.js";

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

const MAX_ENTRY_BYTES = 64 * 1024 * 1024;

async function untar(tarBytes: Buffer, source: string): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  const ex = extract();
  const done = new Promise<void>((resolve, reject) => {
    ex.on("entry", (header, stream, next) => {
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on("data", (chunk: unknown) => {
        const c = chunk as Buffer;
        size += c.length;
        if (size > MAX_ENTRY_BYTES) {
          stream.destroy(new EngineLoadError("bundle_invalid", `${source}: entry ${header.name} is larger than ${MAX_ENTRY_BYTES} bytes`));
          return;
        }
        chunks.push(c);
      });
      stream.on("end", () => {
        if (header.type === "file") files.set("/" + header.name.replace(/^\/+/, ""), Buffer.concat(chunks));
        next();
      });
      stream.on("error", reject);
    });
    ex.on("finish", resolve);
    ex.on("error", (err: Error) =>
      reject(err instanceof EngineLoadError ? err : new EngineLoadError("bundle_invalid", `${source}: not a tar archive (${err.message})`)),
    );
  });
  ex.end(tarBytes);
  await done;
  return files;
}

function parseJson(bytes: Buffer, what: string): unknown {
  try {
    return JSON.parse(bytes.toString("utf8"));
  } catch (err) {
    throw new EngineLoadError("bundle_invalid", `${what}: invalid JSON (${(err as Error).message})`);
  }
}

/** Parses bundle bytes; `source` names the file in error messages. */
export async function readBundle(bytes: Uint8Array, source: string, requiredEntrypoints: string[]): Promise<Bundle> {
  let tarBytes: Buffer;
  try {
    tarBytes = gunzipSync(bytes);
  } catch (err) {
    throw new EngineLoadError("bundle_invalid", `${source}: not a gzip file (${(err as Error).message})`);
  }
  const files = await untar(tarBytes, source);

  const manifestBytes = files.get("/.manifest");
  if (!manifestBytes) throw new EngineLoadError("manifest_invalid", `${source}: no /.manifest (build it with opa build -t wasm)`);
  const manifest = parseJson(manifestBytes, `${source}:/.manifest`) as BundleManifest;
  if (typeof manifest !== "object" || manifest === null || !Array.isArray(manifest.wasm) || manifest.wasm.length === 0) {
    throw new EngineLoadError("manifest_invalid", `${source}:/.manifest: field "wasm" must list the compiled entrypoints (was this built with -t wasm?)`);
  }
  const entrypoints = manifest.wasm.map((w) => w.entrypoint);
  for (const wanted of requiredEntrypoints) {
    if (!entrypoints.includes(wanted)) {
      throw new EngineLoadError("entrypoint_missing", `${source}:/.manifest: entrypoint "${wanted}" is missing (has: ${entrypoints.join(", ") || "none"})`);
    }
  }
  const modules = new Set(manifest.wasm.map((w) => w.module));
  if (modules.size !== 1) throw new EngineLoadError("manifest_invalid", `${source}:/.manifest: expected one wasm module, found ${[...modules].join(", ")}`);
  const modulePath = [...modules][0] as string;
  const wasm = files.get(modulePath);
  if (!wasm) throw new EngineLoadError("bundle_invalid", `${source}: manifest names ${modulePath} but the bundle has no such file`);

  const dataBytes = files.get("/data.json");
  const data = dataBytes ? parseJson(dataBytes, `${source}:/data.json`) : {};
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new EngineLoadError("data_invalid", `${source}:/data.json: the data document must be a JSON object`);
  }
  const revision = manifest.revision || createHash("sha256").update(bytes).digest("hex").slice(0, 12);
  return { manifest, wasm: new Uint8Array(wasm), data: data as Record<string, unknown>, revision, entrypoints };
}
