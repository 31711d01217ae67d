/**
 * One instance of the compiled policy inside this thread, driven through the unmodified
 * @open-policy-agent/opa-wasm SDK. Evaluation never throws: a trap or an abort is reported, and the
 * instance is rebuilt from the compiled module before the next call (its memory may be corrupt).
 */
import { createRequire } from "node:module";
import type { Bundle } from "./read-bundle.js";
import { EngineLoadError } from "./errors.js";

// The SDK is CommonJS; require() gives its real exports under both tsx and compiled ESM.
const opaWasm = createRequire(import.meta.url)("@open-policy-agent/opa-wasm") as typeof import("@open-policy-agent/opa-wasm");

type LoadedPolicy = ReturnType<typeof opaWasm.loadPolicySync>;

export type EvalOutcome = { ok: true; results: unknown } | { ok: false; error: string };

export class PolicyInstance {
  private readonly module: WebAssembly.Module;
  private readonly data: Record<string, unknown>;
  private policy: LoadedPolicy;
  private entrypointIds = new Map<string, number>();
  /** How many times a trap made us rebuild the instance. */
  traps = 0;

  constructor(bundle: Bundle, source: string) {
    try {
      this.module = new WebAssembly.Module(bundle.wasm);
    } catch (err) {
      throw new EngineLoadError("wasm_invalid", `${source}:/policy.wasm: not a valid WebAssembly module (${(err as Error).message})`);
    }
    this.data = bundle.data;
    this.policy = this.instantiate(source);
  }

  private instantiate(source = "bundle"): LoadedPolicy {
    let policy: LoadedPolicy;
    try {
      policy = opaWasm.loadPolicySync(this.module as never);
      policy.setData(this.data);
    } catch (err) {
      throw new EngineLoadError("wasm_invalid", `${source}:/policy.wasm: the OPA SDK could not load it (${(err as Error).message})`);
    }
    this.entrypointIds = new Map(Object.entries(policy.entrypoints as Record<string, number>));
    return policy;
  }

  hasEntrypoint(name: string): boolean {
    return this.entrypointIds.has(name);
  }

  evaluate(entrypoint: string, input: unknown): EvalOutcome {
    const id = this.entrypointIds.get(entrypoint);
    if (id === undefined) return { ok: false, error: `entrypoint ${entrypoint} is not in the module` };
    try {
      return { ok: true, results: this.policy.evaluate(input, id) };
    } catch (err) {
      this.traps++;
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
