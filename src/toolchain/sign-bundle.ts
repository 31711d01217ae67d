/**
 * Signs a built bundle in OPA's format: re-reads the tar.gz, computes the OPA file hashes, and writes the
 * same files plus /.signatures.json (one JWS made with jose), so `opa run --verification-key` and
 * `portier serve --verification-key` accept it. An existing signature is replaced.
 */
import { gzipSync } from "node:zlib";
import { pack } from "tar-stream";
import { inflateAndUntar, signBundleFiles, DEFAULT_MAX_BUNDLE_BYTES } from "../engine/index.js";

const SIGNATURES = "/.signatures.json";

/** A tar of the files (names as in the bundle, mtime 0). */
export function tarOf(files: Map<string, Buffer>): Promise<Buffer> {
  const p = pack();
  const chunks: Buffer[] = [];
  p.on("data", (c: unknown) => chunks.push(c as Buffer));
  const done = new Promise<Buffer>((resolve, reject) => {
    p.on("end", () => resolve(Buffer.concat(chunks)));
    p.on("error", reject);
  });
  for (const [name, bytes] of files) p.entry({ name, size: bytes.length, mode: 0o600, mtime: new Date(0) }, bytes);
  p.finalize();
  return done;
}

/** Returns the signed bundle (gzipped tar) for the bundle bytes and a PEM private key. */
export async function signBundle(
  bundle: Uint8Array,
  privateKeyPem: string,
  alg?: string,
  source = "bundle",
): Promise<Buffer> {
  const files = await inflateAndUntar(bundle, source, DEFAULT_MAX_BUNDLE_BYTES);
  files.delete(SIGNATURES);
  const signatures = await signBundleFiles(files, privateKeyPem, alg);
  // OPA writes the signatures before the manifest; the order does not matter to either reader.
  const out = new Map([...files, [SIGNATURES, signatures]]);
  return gzipSync(await tarOf(out));
}
