/**
 * Loads a compiled bundle (a path or bytes) into a decision engine in this thread, with or without a
 * decision memo. Throws EngineLoadError naming the file when the bundle is unusable.
 */
import { unreadable } from "../errors/caught.js";
import { InputFileError, readInputFile } from "../files/read-input-file.js";
import { readBundle, DEFAULT_MAX_BUNDLE_BYTES } from "./read-bundle.js";
import { EngineLoadError } from "./errors.js";
import type { VerificationKey } from "./bundle-signature.js";
import { InProcessEngine, DECISION_ENTRYPOINT } from "./in-process-engine.js";
import type { DecisionMemoOptions } from "./decision-memo.js";

export interface LoadEngineOptions {
  /** Keep up to this many decisions (and bytes) of this bundle; absent or 0 entries (default): no memo. */
  memo?: DecisionMemoOptions | undefined;
  /** Name used in error messages when the bundle is given as bytes. */
  source?: string;
  /** Cap on the bundle's size, compressed and inflated (default 64 MiB); a bigger one is refused early. */
  maxBytes?: number;
  /** When set, an unsigned bundle or one whose OPA signature does not verify with this key is refused. */
  verificationKey?: VerificationKey | undefined;
}

async function bytesOf(bundle: string | Uint8Array, source: string, maxBytes: number): Promise<Uint8Array> {
  if (typeof bundle !== "string") return bundle;
  try {
    return await readInputFile(bundle, maxBytes);
  } catch (err) {
    if (err instanceof InputFileError && err.code === "file_too_large")
      throw new EngineLoadError("bundle_too_large", `${err.message} (--bundle-max-bytes)`);
    throw new EngineLoadError("bundle_unreadable", unreadable(source, err));
  }
}

export async function loadEngine(
  bundle: string | Uint8Array,
  options: LoadEngineOptions = {},
): Promise<InProcessEngine> {
  const source = options.source ?? (typeof bundle === "string" ? bundle : "bundle");
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BUNDLE_BYTES;
  const bytes = await bytesOf(bundle, source, maxBytes);
  if (bytes.length > maxBytes)
    throw new EngineLoadError(
      "bundle_too_large",
      `${source}: the bundle (${bytes.length} bytes) is larger than the limit of ${maxBytes} bytes ` +
        "(--bundle-max-bytes)",
    );
  const parsed = await readBundle(bytes, source, [DECISION_ENTRYPOINT], {
    maxBytes,
    verificationKey: options.verificationKey,
  });
  return new InProcessEngine(parsed, source, { memo: options.memo });
}
