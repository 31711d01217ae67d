/**
 * `portier diff <old> <new>`: every grant gained or lost between two policies (bundle files, policy
 * folders or git revisions), for review in a pull request. Exit 0: no change; 1: changes; 2: error.
 */
import { computeMatrix, diffMatrices, loadPolicySource, renderDiff } from "../../review/index.js";
import { parse, UsageError } from "../args.js";

const USAGE = "usage: portier diff [--json] [--opa PATH] <old> <new>   (each a bundle .tar.gz, a policy folder, or a git revision)";

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, { json: { type: "boolean" }, opa: { type: "string" } }, USAGE);
  if (positionals.length !== 2) throw new UsageError(USAGE);
  const [oldRef, newRef] = positionals as [string, string];
  const before = computeMatrix(await loadPolicySource(oldRef, { opa: values.opa }));
  const after = computeMatrix(await loadPolicySource(newRef, { opa: values.opa }));
  const diff = diffMatrices(before, after);
  process.stdout.write(values.json ? JSON.stringify(diff, null, 2) + "\n" : renderDiff(diff));
  return diff.changes.length + diff.routesAdded.length + diff.routesRemoved.length > 0 ? 1 : 0;
}
