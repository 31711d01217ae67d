/**
 * `portier bundle build [--out build/bundle.tar.gz] [--opa PATH] [--signing-key KEY]`: validates data/, checks
 * the policies with `opa check --strict` and compiles them with `opa build -t wasm` for the entrypoints they
 * annotate; with --signing-key, Portier signs the result in OPA's format (/.signatures.json).
 * `portier bundle sign --signing-key KEY [--out FILE] BUNDLE`: signs an already built bundle.
 */
import { dirname, join, resolve } from "node:path";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { readInputFileSync } from "../../files/read-input-file.js";
import { buildBundle } from "../../toolchain/build-bundle.js";
import { signBundle } from "../../toolchain/sign-bundle.js";
import { opaPath } from "../../toolchain/opa.js";
import { PROJECT_ROOT } from "../../toolchain/project-root.js";
import { DEFAULT_MAX_BUNDLE_BYTES, DEFAULT_SIGNING_ALG, SIGNING_ALGS } from "../../engine/index.js";
import { OPA_OPTION, PROJECT_OPTION, isOneOf, parse, usageError, type CommandSpec } from "../args.js";
import { unreadable } from "../../errors/caught.js";

export const SPEC = {
  name: "portier bundle",
  positionals: "build | sign BUNDLE",
  summary:
    "build: validates data/, checks the policies with `opa check --strict` and compiles them to a wasm bundle.\n" +
    "sign: signs a built bundle in OPA's format (/.signatures.json), as `opa build --signing-key` does.",
  options: {
    project: PROJECT_OPTION,
    out: {
      type: "string",
      value: "FILE",
      description: "where to write the bundle (sign: default overwrites BUNDLE)",
      default: "PROJECT/build/bundle.tar.gz",
    },
    opa: OPA_OPTION,
    "signing-key": {
      type: "string",
      value: "FILE",
      description: 'PEM private key: sign the bundle (/.signatures.json, key id "default")',
      default: "unsigned",
    },
    "signing-alg": {
      type: "string",
      value: "ALG",
      description: `JWS algorithm of the signature (${SIGNING_ALGS.join(", ")})`,
      default: DEFAULT_SIGNING_ALG,
    },
  },
  exits: { ok: "the bundle was written (data/ or a policy that cannot be built exits 2)" },
} as const satisfies CommandSpec;

/** The largest --signing-key file: a PEM private key is a few KiB. */
const MAX_KEY_FILE_BYTES = 64 * 1024;

/** A file the command is given, within its bound, or an error naming the option and why. */
function readNamed(option: string, file: string, maxBytes: number): Buffer {
  try {
    return readInputFileSync(file, maxBytes);
  } catch (err) {
    throw new Error(`${option}: ${unreadable(file, err)}`);
  }
}

function readKey(file: string): string {
  return readNamed("--signing-key", file, MAX_KEY_FILE_BYTES).toString("utf8");
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, SPEC);
  const alg = values["signing-alg"] ?? DEFAULT_SIGNING_ALG;
  if (!isOneOf(SIGNING_ALGS, alg))
    throw usageError(SPEC, `--signing-alg: "${alg}" is not one of ${SIGNING_ALGS.join(", ")}`);
  const [action, target] = positionals;
  if (action === "sign" && target !== undefined && positionals.length === 2) {
    if (values["signing-key"] === undefined) throw usageError(SPEC, "sign needs --signing-key FILE");
    const input = resolve(target);
    const out = resolve(values.out ?? input);
    const bundle = readNamed("sign", input, DEFAULT_MAX_BUNDLE_BYTES);
    writeFileSync(out, await signBundle(bundle, readKey(values["signing-key"]), alg, input));
    console.log(`bundle signed: ${out} (${alg})`);
    return 0;
  }
  if (positionals[0] !== "build" || positionals.length !== 1)
    throw usageError(SPEC, 'expected the sub-command "build" or "sign BUNDLE"');
  const key = values["signing-key"] === undefined ? undefined : readKey(values["signing-key"]);
  const project = resolve(values.project ?? PROJECT_ROOT);
  const out = resolve(values.out ?? join(project, "build", "bundle.tar.gz"));
  mkdirSync(dirname(out), { recursive: true });
  const { revision, entrypoints } = await buildBundle({
    opa: opaPath(values.opa),
    projectDir: project,
    workDir: join(project, "build"),
    out,
  });
  if (key !== undefined) writeFileSync(out, await signBundle(readFileSync(out), key, alg, out));
  console.log(
    `bundle ok: ${out} (revision ${revision}; entrypoints ` +
      `${entrypoints.join(", ")}${key === undefined ? "" : `; signed ${alg}`})`,
  );
  return 0;
}
