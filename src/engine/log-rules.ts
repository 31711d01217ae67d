/**
 * The bundle's decision-log rules, as OPA's system.log.mask and system.log.drop: the policies' portier.log
 * package answers both for a decision log event in one document (one evaluation per event). A bundle without
 * it (an older one) has none: every event is kept whole.
 * When the bundle says which parts of an event the rules read (data.portier_bundle.log_rules_reads, found by
 * `opa deps` when it was built), the rules are evaluated on those parts only, and their answer is kept for
 * the next event with the same parts (a memo bounded in entries and bytes, one per bundle revision): a user's many
 * decisions with one token cost one evaluation. Without them, every event is evaluated whole.
 */
import { LRUCache } from "lru-cache";
import { resultOf, type PolicyInstance } from "./policy-instance.js";
import { PolicyEvaluationError } from "./errors.js";

/** mask and drop of the portier.log package in one document: {"drop": bool, "mask": set}. */
export const LOG_RULES_ENTRYPOINT = "portier/log/rules";

/** Where `portier bundle build` writes the paths the rules read: data.portier_bundle.log_rules_reads. */
export const READS_ROOT = "portier_bundle";
export const READS_KEY = "log_rules_reads";

/**
 * The memo's bounds, per bundle revision: answers kept, UTF-16 units of key text kept in all (8 MiB), and the
 * longest key (an event's parts as JSON) an answer is kept for. The oldest answers go first.
 */
export const MEMO_ENTRIES = 4096;
const MEMO_UNITS = 4 * 1024 * 1024;
const MEMO_KEY_UNITS = 8192;

export interface LogRulesAnswer {
  drop: unknown;
  mask: unknown;
}

/** The rules' answer for one event. */
export interface LogRules {
  /**
   * `event`: the decision log event; `encoded`: its JSON text (asked for only when the rules read the event whole;
   * the caller keeps it for shipping). Throws PolicyEvaluationError when evaluation fails (a rule's conflict, a
   * builtin's error). The answer may be shared with other events: never change it.
   */
  evaluate(event: Record<string, unknown>, encoded: () => string): LogRulesAnswer;
  /** The parts of the event the rules read (data.portier_bundle.log_rules_reads); undefined: the whole event. */
  readonly reads?: readonly (readonly string[])[] | undefined;
}

/** The bundle's read paths (an array of non-empty arrays of strings), or undefined when absent or malformed. */
export function readsOf(data: Record<string, unknown>): string[][] | undefined {
  const root = data[READS_ROOT];
  const reads = typeof root === "object" && root !== null ? (root as Record<string, unknown>)[READS_KEY] : undefined;
  if (!Array.isArray(reads)) return undefined;
  const ok = reads.every((p) => Array.isArray(p) && p.length > 0 && p.every((k) => typeof k === "string"));
  return ok ? (reads as string[][]) : undefined;
}

/** The parts of `event` at `reads`, in a document of the same shape (absent parts stay absent). */
export function project(
  event: Record<string, unknown>,
  reads: readonly (readonly string[])[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const keys of reads) {
    let value: unknown = event;
    for (const key of keys) {
      value = typeof value === "object" && value !== null && !Array.isArray(value) ? (value as never)[key] : undefined;
      if (value === undefined) break;
    }
    if (value === undefined) continue;
    let to = out;
    for (const key of keys.slice(0, -1)) to = (to[key] ??= {}) as Record<string, unknown>;
    to[keys[keys.length - 1]!] = value;
  }
  return out;
}

/** The rules of the instance's module, or undefined when it has no portier/log/rules entrypoint. */
export function logRulesOf(instance: PolicyInstance, reads: string[][] | undefined): LogRules | undefined {
  const id = instance.entrypointId(LOG_RULES_ENTRYPOINT);
  if (id === undefined) return undefined;
  const run = (json: string): LogRulesAnswer => {
    const outcome = instance.evaluateJson(id, json);
    if (!outcome.ok) throw new PolicyEvaluationError(`evaluating ${LOG_RULES_ENTRYPOINT} failed: ${outcome.error}`);
    const value = resultOf(outcome.results);
    if (typeof value !== "object" || value === null)
      throw new PolicyEvaluationError(`${LOG_RULES_ENTRYPOINT}: no {drop, mask} document (a rule is undefined)`);
    const { drop, mask } = value as { drop?: unknown; mask?: unknown };
    return Object.freeze({ drop, mask });
  };
  if (reads === undefined) return { evaluate: (_event, encoded) => run(encoded()) };
  // Sized by the key's UTF-16 units. Read with peek(), which leaves the order alone: the oldest answer goes first.
  const memo = new LRUCache<string, LogRulesAnswer>({
    max: MEMO_ENTRIES,
    maxSize: MEMO_UNITS,
    maxEntrySize: MEMO_KEY_UNITS,
    sizeCalculation: (_answer, key) => key.length,
  });
  return {
    reads,
    evaluate(event) {
      const key = JSON.stringify(project(event, reads));
      const known = memo.peek(key);
      if (known !== undefined) return known;
      const answer = run(key);
      memo.set(key, answer);
      return answer;
    },
  };
}
