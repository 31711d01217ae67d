/**
 * `portier diff <old> <new>`: everything the policy decides on that changed between two policies (bundle
 * files, policy folders or git revisions): grants of the route x role grid, other methods, token shapes
 * and tenant bindings. Exit 0: no change; 1: changes; 2: no answer (usage, a source that cannot be read or built,
 * a stale build/bundle.tar.gz).
 */
import {
  computeMatrix,
  diffMatrices,
  hasChanges,
  loadPolicySource,
  probeUniverse,
  renderDiff,
  renderDiffMarkdown,
} from "../../review/index.js";
import { resolveProject } from "../../toolchain/project.js";
import { OPA_OPTION, PROJECT_OPTION, isOneOf, parse, usageError, type CommandSpec } from "../args.js";
import { messageOf } from "../../errors/caught.js";
import { EXIT } from "../exit-codes.js";

const FORMATS = ["text", "md", "json"] as const;

export const SPEC = {
  name: "portier diff",
  positionals: "OLD NEW",
  summary:
    "Lists everything the policy decides on that changed between two policies: grants of the route x role grid, " +
    "other\nmethods, token shapes and tenant bindings. OLD and NEW are each a bundle .tar.gz, a policy folder, " +
    "or a git revision.",
  options: {
    project: PROJECT_OPTION,
    format: {
      type: "string",
      value: "FORMAT",
      description: "text, md (a pull-request comment) or json",
      default: "text",
    },
    opa: OPA_OPTION,
  },
  exits: { ok: "no change", finding: "something changed" },
} as const satisfies CommandSpec;

export async function run(argv: string[]): Promise<number> {
  // One spelling: --json (a second spelling of --format json) is refused with the one to write instead.
  const options = argv.includes("--") ? argv.slice(0, argv.indexOf("--")) : argv;
  if (options.some((a) => a === "--json" || a.startsWith("--json=")))
    throw usageError(SPEC, "--json is no longer an option: write --format json");
  const { values, positionals } = parse(argv, SPEC);
  const [oldRef, newRef] = positionals;
  if (oldRef === undefined || newRef === undefined || positionals.length !== 2)
    throw usageError(SPEC, `expected two policies (OLD NEW), got ${positionals.length}`);
  const format = values.format ?? SPEC.options.format.default;
  if (!isOneOf(FORMATS, format))
    throw usageError(SPEC, `--format must be one of ${FORMATS.join(", ")}, got "${format}"`);
  try {
    const project = resolveProject(values.project).dir;
    const oldEngine = await loadPolicySource(oldRef, { opa: values.opa, project });
    const newEngine = await loadPolicySource(newRef, { opa: values.opa, project });
    // Both sides are probed with every tenant and code either knows, so a moved binding shows.
    const universe = probeUniverse(oldEngine, newEngine);
    const diff = diffMatrices(computeMatrix(oldEngine, universe), computeMatrix(newEngine, universe));
    const text =
      format === "json"
        ? JSON.stringify(diff, null, 2) + "\n"
        : format === "md"
          ? renderDiffMarkdown(diff, { before: oldRef, after: newRef })
          : renderDiff(diff);
    process.stdout.write(text);
    return hasChanges(diff) ? EXIT.finding : EXIT.ok;
  } catch (err) {
    console.error(`portier diff: ${messageOf(err)}`);
    return EXIT.error;
  }
}
