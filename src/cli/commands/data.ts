/**
 * `portier data build [--dir data] [--out build/bundle-data]`: validates data/ and writes the bundle's
 * data document. `portier data check`: validates only.
 */
import { join, resolve } from "node:path";
import { loadCatalog } from "../../catalog/index.js";
import { writeBundleData } from "../../toolchain/build-bundle.js";
import { resolveProject } from "../../toolchain/project.js";
import { PROJECT_OPTION, parse, usageError, type CommandSpec } from "../args.js";

export const SPEC = {
  name: "portier data",
  positionals: "build|check",
  summary: "check: validates data/ against its schemas. build: validates and writes the bundle's data document.",
  options: {
    project: PROJECT_OPTION,
    out: {
      type: "string",
      value: "DIR",
      description: "where build writes the data document",
      default: "PROJECT/build/bundle-data",
    },
  },
  exits: { ok: "data/ is valid (invalid data exits 2, naming the file and field)" },
} as const satisfies CommandSpec;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, SPEC);
  const project = resolveProject(values.project).dir;
  const action = positionals[0];
  if (action === "check") {
    const c = loadCatalog(join(project, "data"));
    console.log(`data ok: ${c.roles.length} roles, ${c.routes.length} routes, ${c.tenants.length} tenant bindings`);
    return 0;
  }
  if (action === "build") {
    const out = resolve(values.out ?? join(project, "build", "bundle-data"));
    writeBundleData(project, out);
    console.log(`data ok: wrote ${join(out, "catalog", "data.json")}`);
    return 0;
  }
  throw usageError(SPEC, 'expected the sub-command "build" or "check"');
}
