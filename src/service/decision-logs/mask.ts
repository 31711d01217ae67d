/**
 * The mask rule's answer applied to a decision log event, as OPA's decision-log plugin does for
 * system.log.mask: the rule returns JSON pointers to erase ("/input/token/sub") and objects
 * {"op": "upsert", "path": "/input/x", "value": ...} (or {"op": "remove", "path": ...}). Only /input and /result
 * may be touched. What was removed is listed in the event's `erased`, what was replaced in `masked`. An answer
 * that is not such a list is refused whole (MaskRuleError, naming the position), and the caller drops the event
 * rather than ship it unmasked.
 */
import { PortierError } from "../../errors/portier-error.js";

export class MaskRuleError extends PortierError {
  static override readonly code = "decision_log_mask_invalid";
}

export type MaskOp =
  { op: "remove"; pointer: string; keys: string[] } | { op: "upsert"; pointer: string; keys: string[]; value: unknown };

/** The parts of the event a mask may change: OPA's rule, /input and /result. */
const MASKABLE = new Set(["input", "result"]);

function parsePointer(pointer: unknown, where: string): { pointer: string; keys: string[] } {
  if (typeof pointer !== "string" || !pointer.startsWith("/"))
    throw new MaskRuleError(`${where}: must be a JSON pointer starting with /input or /result`);
  const keys = pointer
    .slice(1)
    .split("/")
    .map((k) => k.replace(/~1/g, "/").replace(/~0/g, "~"));
  if (!MASKABLE.has(keys[0]!))
    throw new MaskRuleError(`${where}: ${JSON.stringify(pointer)} is outside /input and /result`);
  return { pointer, keys };
}

/** The mask rule's value (a set arrives as an array), as operations; undefined (no rule matched) is none. */
export function parseMask(value: unknown): MaskOp[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new MaskRuleError("mask: must be a set of JSON pointers or {op, path} objects");
  return value.map((item, i): MaskOp => {
    const where = `mask[${i}]`;
    if (typeof item === "string") return { op: "remove", ...parsePointer(item, where) };
    if (typeof item !== "object" || item === null) throw new MaskRuleError(`${where}: must be a string or an object`);
    const { op, path, value: v } = item as Record<string, unknown>;
    const parsed = parsePointer(path, `${where}.path`);
    if (op === "remove") return { op, ...parsed };
    if (op === "upsert") {
      if (v === undefined) throw new MaskRuleError(`${where}.value: is required for upsert`);
      return { op, ...parsed, value: v };
    }
    throw new MaskRuleError(`${where}.op: must be "remove" or "upsert"`);
  });
}

/** The container that holds the last key of `keys` inside `root`, or undefined when a step is missing. */
function parentOf(root: Record<string, unknown>, keys: string[], create: boolean): Record<string, unknown> | undefined {
  let node: unknown = root;
  for (const key of keys.slice(0, -1)) {
    if (typeof node !== "object" || node === null) return undefined;
    const next: unknown = (node as Record<string, unknown>)[key];
    if (next === undefined && create && !Array.isArray(node)) {
      const made: Record<string, unknown> = {};
      (node as Record<string, unknown>)[key] = made;
      node = made;
    } else node = next;
  }
  return typeof node === "object" && node !== null ? (node as Record<string, unknown>) : undefined;
}

/**
 * Applies `ops` to `target` in place (a deep copy of what is masked: the caller's objects are shared with the
 * answer). Returns the pointers erased and masked, in the order applied.
 */
export function applyMask(target: Record<string, unknown>, ops: MaskOp[]): { erased: string[]; masked: string[] } {
  const erased: string[] = [];
  const masked: string[] = [];
  for (const op of ops) {
    const parent = parentOf(target, op.keys, op.op === "upsert");
    const last = op.keys[op.keys.length - 1]!;
    if (parent === undefined) continue;
    if (op.op === "remove") {
      if (!Object.hasOwn(parent, last)) continue;
      if (Array.isArray(parent)) parent.splice(Number(last), 1);
      else delete parent[last];
      erased.push(op.pointer);
    } else {
      parent[last] = op.value;
      masked.push(op.pointer);
    }
  }
  return { erased, masked };
}
