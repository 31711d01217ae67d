/**
 * One instance of the compiled policy inside this thread. The unmodified @open-policy-agent/opa-wasm SDK
 * loads it (ABI check, builtins, data); evaluation then calls the module's `opa_eval` export directly with
 * the input JSON written straight into wasm memory, and reads the result set's JSON text from there: the
 * SDK's evaluate() builds an encoder, a decoder and an intermediate copy per call and scans for the result's
 * end byte by byte in JS. Evaluation never throws: a trap or an abort is reported, and the instance is
 * rebuilt from the compiled module before the next call (its memory may be corrupt).
 */
import { createRequire } from "node:module";
import type { Bundle } from "./read-bundle.js";
import { EngineLoadError } from "./errors.js";

// The SDK is CommonJS; require() gives its real exports under both tsx and compiled ESM.
const opaWasm = createRequire(import.meta.url)("@open-policy-agent/opa-wasm") as typeof import("@open-policy-agent/opa-wasm");

type LoadedPolicy = ReturnType<typeof opaWasm.loadPolicySync>;

/** The parts of the SDK's LoadedPolicy (public JS fields, untyped by the SDK) that evaluation uses. */
interface PolicyInternals {
  minorVersion: number;
  mem: { buffer: ArrayBuffer; grow(pages: number): number };
  wasmInstance: { exports: { opa_eval(reserved: 0, entrypoint: number, data: number, input: number, inputLen: number, heapPtr: number, format: 0): number } };
  dataAddr: number;
  dataHeapPtr: number;
}

type OpaEval = PolicyInternals["wasmInstance"]["exports"]["opa_eval"];

export type EvalOutcome = { ok: true; results: unknown } | { ok: false; error: string };
/** The result set as the module wrote it: JSON text of [{"result": value}] ([] when undefined). */
export type EvalTextOutcome = { ok: true; text: string } | { ok: false; error: string };

const PAGE_BYTES = 64 * 1024;

export class PolicyInstance {
  private readonly module: WebAssembly.Module;
  private readonly data: Record<string, unknown>;
  private policy: LoadedPolicy;
  private entrypointIds = new Map<string, number>();
  // Reused between evaluations; `view` is rebuilt when the memory grows (growing detaches the old buffer).
  private opaEval!: OpaEval;
  private internals!: PolicyInternals;
  private view!: Buffer;
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
    const internals = policy as unknown as PolicyInternals;
    // opa_eval with the input as JSON bytes exists from ABI 1.2 on (OPA >= 0.37); the pinned OPA builds 1.3.
    if (!(internals.minorVersion >= 2) || typeof internals.wasmInstance?.exports?.opa_eval !== "function") {
      throw new EngineLoadError("wasm_invalid", `${source}:/policy.wasm: the module has no opa_eval (OPA wasm ABI 1.2 or later is needed)`);
    }
    this.internals = internals;
    this.opaEval = internals.wasmInstance.exports.opa_eval;
    this.view = Buffer.from(internals.mem.buffer);
    this.entrypointIds = new Map(Object.entries(policy.entrypoints as Record<string, number>));
    return policy;
  }

  hasEntrypoint(name: string): boolean {
    return this.entrypointIds.has(name);
  }

  entrypointId(name: string): number | undefined {
    return this.entrypointIds.get(name);
  }

  /** Evaluates with any JSON value as input; parses the result set. */
  evaluate(entrypoint: string, input: unknown): EvalOutcome {
    const id = this.entrypointIds.get(entrypoint);
    if (id === undefined) return { ok: false, error: `entrypoint ${entrypoint} is not in the module` };
    // As the SDK does, a falsy input is evaluated as no input at all.
    const outcome = this.evaluateJson(id, input ? JSON.stringify(input) : "");
    return outcome.ok ? { ok: true, results: JSON.parse(outcome.text) as unknown } : outcome;
  }

  /**
   * Evaluates entrypoint `id` on `json` (the input, already JSON text; "" for none): the text is written once, at the
   * heap pointer the data ends at, and `opa_eval` parses it there, evaluates and dumps the result set in
   * one call; the heap is reset to the same point every time, so memory does not grow between calls.
   */
  evaluateJson(id: number, json: string): EvalTextOutcome {
    try {
      const { internals } = this;
      const at = internals.dataHeapPtr;
      // Worst case 3 UTF-8 bytes per UTF-16 unit; grow first so the write cannot be cut short.
      if (at + json.length * 3 > this.view.length) this.grow(at + json.length * 3);
      const length = this.view.write(json, at);
      const result = this.opaEval(0, id, internals.dataAddr, length === 0 ? 0 : at, length, at + length, 0);
      if (this.view.buffer !== internals.mem.buffer) this.view = Buffer.from(internals.mem.buffer);
      const end = this.view.indexOf(0, result);
      if (end < 0) throw new Error("the result set is not terminated");
      return { ok: true, text: this.view.toString("utf8", result, end) };
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

  private grow(needed: number): void {
    const { mem } = this.internals;
    mem.grow(Math.ceil((needed - mem.buffer.byteLength) / PAGE_BYTES));
    this.view = Buffer.from(mem.buffer);
  }
}
