/**
 * A real engine (the compiled bundle, the SDK's policy) whose policy evaluation a test can take over: the
 * loader wraps each policy the SDK loads, so a test can make `evaluate()` throw (a trap) or answer another
 * result set, and count how many policies were loaded (a trap makes the engine load a fresh one).
 */
import { readFileSync } from "node:fs";
import {
  InProcessEngine,
  readBundle,
  type DecisionMemoOptions,
  type LoadedPolicy,
  type PolicyLoader,
} from "../../src/engine/index.js";
import { sdkLoader } from "../../src/engine/policy-instance.js";
import { requireBundle } from "./bundle.js";

/** Replaces a policy's evaluate(): gets the SDK's own evaluate to call through. */
export type EvaluateOverride = (
  real: (input: unknown, entrypoint?: number | string) => unknown,
  input: unknown,
  entrypoint?: number | string,
) => unknown;

export interface ControlledEngine {
  engine: InProcessEngine;
  /** Every evaluation (of this policy and of those loaded after a trap) goes through `override` until `restore()`. */
  override(override: EvaluateOverride): () => void;
  /** Policies loaded so far (1 after construction; one more per trap). */
  readonly loads: number;
}

export async function controlledEngine(
  memo?: DecisionMemoOptions,
  bundlePath = requireBundle(),
): Promise<ControlledEngine> {
  const bundle = await readBundle(readFileSync(bundlePath), bundlePath, ["portier/decision"]);
  let current: EvaluateOverride | undefined;
  let loads = 0;
  const load: PolicyLoader = (module) => {
    const policy = sdkLoader(module);
    loads++;
    const real = policy.evaluate.bind(policy);
    const wrapped: LoadedPolicy = {
      entrypoints: policy.entrypoints,
      setData: (data) => policy.setData(data),
      evaluate: (input, entrypoint) => (current ? current(real, input, entrypoint) : real(input, entrypoint)),
    };
    return wrapped;
  };
  const engine = new InProcessEngine(bundle, bundlePath, { memo, load });
  return {
    engine,
    override(o) {
      current = o;
      return () => {
        if (current === o) current = undefined;
      };
    },
    get loads() {
      return loads;
    },
  };
}
