/**
 * What the decision-log rules read of an event, found by OPA's own dependency analysis (`opa deps` on
 * data.portier.log.rules, transitive through every rule and function they call): the base documents under
 * `input`, as key paths (["input", "token"] for input.input.token). The bundle carries them
 * (data.portier_bundle.log_rules_reads) so that the service evaluates the rules on those parts of an event only,
 * and answers an event whose parts it has seen from a memo (src/engine/log-rules.ts). A ref the analysis cannot
 * follow by constant keys (input[k], walk(input, ...)) reads the whole event: no paths are written, and every
 * event is evaluated whole. So are rules in a project whose policies call a builtin whose answer changes from
 * one call to the next (time, randomness, uuids, the runtime, HTTP).
 */
import { PortierError } from "../errors/portier-error.js";
import { runOpa } from "./opa.js";

export class LogRulesReadsError extends PortierError {
  static override readonly code = "log_rules_reads_failed";
}

/** Builtins whose answer is not a function of their arguments: rules calling one cannot be answered from a memo. */
export const UNSTABLE_BUILTINS = /\b(time\.now_ns|rand\.intn|uuid\.rfc4122|opa\.runtime|http\.send)\b/;

interface Term {
  type: string;
  value: unknown;
}

/**
 * The key paths under `input` that `refs` (opa deps' base documents) read; null when one reads the whole input.
 * A path stops at its first term that is not a constant string (input.roles[0] reads input.roles).
 */
export function inputPaths(refs: Term[][]): string[][] | null {
  const paths: string[][] = [];
  for (const ref of refs) {
    if (ref[0]?.type !== "var" || ref[0].value !== "input") continue;
    const keys: string[] = [];
    for (const term of ref.slice(1)) {
      if (term.type !== "string") break;
      keys.push(String(term.value));
    }
    if (keys.length === 0) return null;
    paths.push(keys);
  }
  // A path inside another adds nothing: input.result and input.result.allow read input.result.
  const isPrefix = (q: string[], p: string[]) => q.length <= p.length && q.every((k, n) => k === p[n]);
  const kept: string[][] = [];
  for (const p of paths.sort((a, b) => a.length - b.length)) if (!kept.some((q) => isPrefix(q, p))) kept.push(p);
  return kept.sort((a, b) => a.join("\0").localeCompare(b.join("\0")));
}

/**
 * The paths the rules read, or null when they must see every event whole. `sources`: the project's policy
 * texts (their builtins are checked); `loadArgs`: opa's arguments that load the policies and the data document.
 */
export async function logRulesReads(opa: string, loadArgs: string[], sources: string[]): Promise<string[][] | null> {
  if (sources.some((text) => UNSTABLE_BUILTINS.test(text))) return null;
  const run = await runOpa(opa, ["deps", "--format", "json", ...loadArgs, "data.portier.log.rules"]);
  if (run.code !== 0) throw new LogRulesReadsError(`opa deps failed:\n${(run.stderr || run.stdout).trim()}`);
  const base = (JSON.parse(run.stdout) as { base?: Term[][] }).base ?? [];
  return inputPaths(base);
}
