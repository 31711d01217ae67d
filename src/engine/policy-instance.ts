/**
 * One instance of the compiled policy inside this thread, through the @open-policy-agent/opa-wasm SDK's
 * public API: `loadPolicySync` (ABI check, builtins), `setData`, and `evaluate()` with the input given as
 * its JSON text's bytes (the SDK writes them into wasm memory and calls `opa_eval` once, ABI 1.2 and later).
 * Evaluation never throws: a trap or an abort is reported, and the instance is rebuilt from the compiled
 * module before the next call (its memory may be corrupt).
 */
import { createRequire } from "node:module";
import { messageOf } from "../errors/caught.js";
import type { Bundle } from "./read-bundle.js";
import { EngineLoadError } from "./errors.js";

// The SDK is CommonJS; require() gives its real exports under both tsx and compiled ESM.
const opaWasm = createRequire(import.meta.url)(
  "@open-policy-agent/opa-wasm",
) as typeof import("@open-policy-agent/opa-wasm");

/** What the engine uses of the SDK's LoadedPolicy (public API). */
export interface LoadedPolicy {
  readonly entrypoints: unknown;
  setData(data: object): void;
  evaluate(input: unknown, entrypoint?: number | string): unknown;
}

/** Loads the compiled module into a fresh policy; the SDK's loadPolicySync unless a caller (a test) says otherwise. */
export type PolicyLoader = (module: WebAssembly.Module) => LoadedPolicy;

export const sdkLoader: PolicyLoader = (module) => opaWasm.loadPolicySync(module);

/** The first result of a result set; undefined when there is none. */
export function resultOf(results: unknown): unknown {
  return Array.isArray(results) ? (results[0] as { result?: unknown } | undefined)?.result : undefined;
}

export type EvalOutcome = { ok: true; results: unknown } | { ok: false; error: string };

const encoder = new TextEncoder();

/** The exact bytes of `json` as an ArrayBuffer (the SDK takes an ArrayBuffer as input already in JSON). */
function jsonBytes(json: string): ArrayBuffer {
  const bytes = encoder.encode(json);
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes.buffer : bytes.slice().buffer;
}

/** The entrypoints the SDK read from the module: name -> id. */
function entrypointsOf(policy: LoadedPolicy): Map<string, number> {
  const map = new Map<string, number>();
  if (typeof policy.entrypoints === "object" && policy.entrypoints !== null) {
    for (const [name, id] of Object.entries(policy.entrypoints)) if (typeof id === "number") map.set(name, id);
  }
  return map;
}

export class PolicyInstance {
  private readonly module: WebAssembly.Module;
  private readonly data: Record<string, unknown>;
  private readonly load: PolicyLoader;
  private policy: LoadedPolicy;
  private entrypointIds = new Map<string, number>();

  constructor(bundle: Bundle, source: string, load: PolicyLoader = sdkLoader) {
    try {
      this.module = new WebAssembly.Module(bundle.wasm);
    } catch (err) {
      throw new EngineLoadError(
        "wasm_invalid",
        `${source}:/policy.wasm: not a valid WebAssembly module (${messageOf(err)})`,
      );
    }
    this.data = bundle.data;
    this.load = load;
    this.policy = this.instantiate(source);
  }

  private instantiate(source = "bundle"): LoadedPolicy {
    let policy: LoadedPolicy;
    try {
      policy = this.load(this.module);
      policy.setData(this.data);
    } catch (err) {
      throw new EngineLoadError(
        "wasm_invalid",
        `${source}:/policy.wasm: the OPA SDK could not load it (${err instanceof Error ? err.message : String(err)})`,
      );
    }
    this.entrypointIds = entrypointsOf(policy);
    return policy;
  }

  entrypointId(name: string): number | undefined {
    return this.entrypointIds.get(name);
  }

  /** Evaluates with any JSON value as input (as the SDK does, a falsy input is evaluated as no input at all). */
  evaluate(entrypoint: string, input: unknown): EvalOutcome {
    const id = this.entrypointIds.get(entrypoint);
    if (id === undefined) return { ok: false, error: `entrypoint ${entrypoint} is not in the module` };
    return this.run(id, input);
  }

  /** Evaluates entrypoint `id` on `json`, the input already as JSON text; the result set parsed by the SDK. */
  evaluateJson(id: number, json: string): EvalOutcome {
    return this.run(id, jsonBytes(json));
  }

  private run(id: number, input: unknown): EvalOutcome {
    try {
      return { ok: true, results: this.policy.evaluate(input, id) };
    } catch (err) {
      const error = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      try {
        this.policy = this.instantiate();
      } catch {
        // Keep the old instance object; the next evaluation reports its own error.
      }
      return { ok: false, error };
    }
  }
}
