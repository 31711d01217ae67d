/**
 * `portier directory seal FILE [--out FILE]`: appends the end record to an NDJSON synced-users file (or writes
 * a sealed copy), so that the service can tell a complete feed from a prefix of one and never serves a
 * half-written file. A feed writes every record, then seals.
 */
import { resolve } from "node:path";
import { sealDirectoryFile } from "../../directory/seal.js";
import { parse, usageError, type CommandSpec } from "../args.js";

export const SPEC = {
  name: "portier directory",
  positionals: "seal FILE",
  summary:
    'seal: appends the end record {"portier_end":{"records":N,"sha256":"..."}} to an NDJSON directory, which the service\n' +
    "requires (it refuses an NDJSON file without it: a feed still being written). A JSON array needs none.",
  options: {
    out: {
      type: "string",
      value: "FILE",
      description: "write the sealed copy here (written beside it, then renamed)",
      default: "seal FILE in place",
    },
  },
  exits: { ok: "the file was sealed (a file that cannot be sealed exits 2)" },
} as const satisfies CommandSpec;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, SPEC);
  const [action, target] = positionals;
  if (action !== "seal" || target === undefined || positionals.length !== 2)
    throw usageError(SPEC, 'expected the sub-command "seal FILE"');
  const sealed = await sealDirectoryFile(resolve(target), values.out === undefined ? undefined : resolve(values.out));
  console.log(`directory sealed: ${sealed.file} (${sealed.records} records, sha256 ${sealed.sha256})`);
  return 0;
}
