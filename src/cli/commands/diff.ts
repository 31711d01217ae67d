/**
 * `portier diff <old> <new>`: everything the policy decides on that changed between two policies (bundle
 * files, policy folders or git revisions): grants of the route x role grid, other methods, token shapes
 * and tenant bindings. Exit 0: no change; 1: changes; 2: error (usage, or a source that cannot be built).
 */
import { computeMatrix, diffMatrices, hasChanges, loadPolicySource, probeUniverse, renderDiff, renderDiffMarkdown } from "../../review/index.js";
import { parse, UsageError } from "../args.js";

const USAGE = "usage: portier diff [--format text|md|json] [--json] [--opa PATH] <old> <new>   (each a bundle .tar.gz, a policy folder, or a git revision)";
const FORMATS = ["text", "md", "json"] as const;

export async function run(argv: string[]): Promise<number> {
  try {
    const { values, positionals } = parse(argv, { json: { type: "boolean" }, format: { type: "string" }, opa: { type: "string" } }, USAGE);
    if (positionals.length !== 2) throw new UsageError(USAGE);
    const format = values.json ? "json" : (values.format ?? "text");
    if (!(FORMATS as readonly string[]).includes(format)) throw new UsageError(`--format must be one of ${FORMATS.join(", ")}\n${USAGE}`);
    const [oldRef, newRef] = positionals as [string, string];
    const oldEngine = await loadPolicySource(oldRef, { opa: values.opa });
    const newEngine = await loadPolicySource(newRef, { opa: values.opa });
    // Both sides are probed with every tenant and code either knows, so a moved binding shows.
    const universe = probeUniverse(oldEngine, newEngine);
    const diff = diffMatrices(computeMatrix(oldEngine, universe), computeMatrix(newEngine, universe));
    const text = format === "json" ? JSON.stringify(diff, null, 2) + "\n" : format === "md" ? renderDiffMarkdown(diff, { before: oldRef, after: newRef }) : renderDiff(diff);
    process.stdout.write(text);
    return hasChanges(diff) ? 1 : 0;
  } catch (err) {
    console.error(`portier diff: ${(err as Error).message}`);
    return 2;
  }
}
