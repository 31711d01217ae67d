/**
 * Loads a compiled bundle (a path or bytes) into a decision engine: in this thread (default) or a pool
 * of worker threads. Throws EngineLoadError naming the file when the bundle is unusable.
 */
import { readFile } from "node:fs/promises";
import { readBundle } from "./read-bundle.js";
import { EngineLoadError } from "./errors.js";
import { InProcessEngine, DECISION_ENTRYPOINT } from "./in-process-engine.js";
import { WorkerPoolEngine } from "./worker-pool-engine.js";
import type { DecisionEngine } from "./types.js";

export interface LoadEngineOptions {
  /** 0 (default): evaluate in this thread. N > 0: a pool of N worker threads. */
  workers?: number;
  /** Name used in error messages when the bundle is given as bytes. */
  source?: string;
}

export type LoadedEngine = DecisionEngine & { manifest?: Record<string, unknown> };

async function bytesOf(bundle: string | Uint8Array, source: string): Promise<Uint8Array> {
  if (typeof bundle !== "string") return bundle;
  try {
    return await readFile(bundle);
  } catch (err) {
    throw new EngineLoadError("bundle_unreadable", `${source}: cannot read the bundle (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
}

export async function loadEngine(bundle: string | Uint8Array, options: LoadEngineOptions = {}): Promise<InProcessEngine | WorkerPoolEngine> {
  const workers = options.workers ?? 0;
  if (!Number.isInteger(workers) || workers < 0) throw new TypeError("options.workers must be a whole number >= 0");
  const source = options.source ?? (typeof bundle === "string" ? bundle : "bundle");
  const bytes = await bytesOf(bundle, source);
  const parsed = await readBundle(bytes, source, [DECISION_ENTRYPOINT]);
  // Instantiating here also proves the module loads before any worker is started.
  const engine = new InProcessEngine(parsed, source);
  if (workers === 0) return engine;
  return WorkerPoolEngine.start(bytes, source, parsed.revision, workers, engine.roles);
}
