/**
 * `portier diff <old> <new>`: every grant gained or lost between two policies (bundle files, policy
 * folders or git revisions), for review in a pull request. Exit 0: no change; 1: changes; 2: error.
 */
import { computeMatrix, diffMatrices, loadPolicySource, renderDiff } from "../../review/index.js";
import { OPA_OPTION, parse, usageError, type CommandSpec } from "../args.js";

export const SPEC = {
  name: "portier diff",
  positionals: "OLD NEW",
  summary: "Lists every grant gained or lost between two policies. OLD and NEW are each a bundle .tar.gz, a policy folder,\nor a git revision of this repository.",
  options: {
    json: { type: "boolean", description: "print the difference as JSON", default: "text" },
    opa: OPA_OPTION,
  },
  notes: "exit codes: 0 no change, 1 grants changed (or an error), 2 usage error",
} as const satisfies CommandSpec;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, SPEC);
  if (positionals.length !== 2) throw usageError(SPEC, `expected two policies (OLD NEW), got ${positionals.length}`);
  const [oldRef, newRef] = positionals as [string, string];
  const before = computeMatrix(await loadPolicySource(oldRef, { opa: values.opa }));
  const after = computeMatrix(await loadPolicySource(newRef, { opa: values.opa }));
  const diff = diffMatrices(before, after);
  process.stdout.write(values.json ? JSON.stringify(diff, null, 2) + "\n" : renderDiff(diff));
  return diff.changes.length + diff.routesAdded.length + diff.routesRemoved.length > 0 ? 1 : 0;
}
