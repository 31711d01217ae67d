/**
 * `portier bundle build [--out build/bundle.tar.gz] [--opa PATH] [--signing-key KEY]`: validates data/, checks
 * the policies with `opa check --strict` and compiles them with `opa build -t wasm` for the entrypoints they
 * annotate; with --signing-key, Portier signs the result in OPA's format (/.signatures.json). With --rev REV, a
 * candidate from a git revision (git archive, no checkout), written to build/candidates/COMMIT.tar.gz by default
 * (outside build/ itself, whose bundles the review commands compare with the working tree's sources)
 * and never over an existing file without --force (it may be the bundle a running service watches).
 * `portier bundle sign --signing-key KEY [--out FILE] BUNDLE`: signs an already built bundle.
 */
import { dirname, join, resolve } from "node:path";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { readInputFileSync } from "../../files/read-input-file.js";
import { buildBundle } from "../../toolchain/build-bundle.js";
import { signBundle } from "../../toolchain/sign-bundle.js";
import { exportRevision } from "../../toolchain/export-revision.js";
import { opaPath } from "../../toolchain/opa.js";
import { resolveProject } from "../../toolchain/project.js";
import { DEFAULT_MAX_BUNDLE_BYTES, DEFAULT_SIGNING_ALG, SIGNING_ALGS } from "../../engine/index.js";
import { OPA_OPTION, PROJECT_OPTION, isOneOf, parse, usageError, type CommandSpec } from "../args.js";
import { unreadable } from "../../errors/caught.js";

export const SPEC = {
  name: "portier bundle",
  positionals: "build | sign BUNDLE",
  summary:
    "build: validates data/, checks the policies with `opa check --strict` and compiles them to a wasm bundle\n" +
    "(--rev REV: a candidate from a git revision, without a checkout).\n" +
    "sign: signs a built bundle in OPA's format (/.signatures.json), as `opa build --signing-key` does.",
  options: {
    project: PROJECT_OPTION,
    out: {
      type: "string",
      value: "FILE",
      description:
        "where to write the bundle (sign: default overwrites BUNDLE; build --rev: never over an existing file " +
        "without --force)",
      default: "PROJECT/build/bundle.tar.gz; with --rev, PROJECT/build/candidates/COMMIT.tar.gz",
    },
    rev: {
      type: "string",
      value: "REV",
      description:
        "build: a candidate from a git revision of the project (its policies/ and data/ read with git archive, " +
        "no checkout)",
      default: "the working tree",
    },
    force: {
      type: "boolean",
      description: "build --rev: write over an existing file at --out (a bundle a running service may watch)",
      default: "refuse",
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
  const project = resolveProject(values.project).dir;
  if (values.rev === undefined) {
    // The working tree to build/bundle.tar.gz is the development loop: a running `portier serve` reloads it.
    const out = resolve(values.out ?? join(project, "build", "bundle.tar.gz"));
    await build({ project, sources: project, out, opa: values.opa, key, alg, from: "" });
    return 0;
  }
  const work = mkdtempSync(join(tmpdir(), "portier-bundle-rev-"));
  try {
    const commit = exportRevision(project, values.rev, work);
    // build/candidates/: a bundle of build/ itself is checked against the working tree by the review commands.
    const out = resolve(values.out ?? join(project, "build", "candidates", `${commit.slice(0, 12)}.tar.gz`));
    // A candidate never replaces a file silently: it may be the bundle a running service watches and reloads.
    if (existsSync(out) && values.force !== true)
      throw new Error(
        `--out ${out} exists (a running service may be watching it); pass --force to write over it, ` +
          "or name another file",
      );
    await build({ project, sources: work, out, opa: values.opa, key, alg, from: ` from ${values.rev} (${commit})` });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return 0;
}

async function build(o: {
  project: string;
  /** The folder holding policies/ and data/: the project, or a revision exported from it. */
  sources: string;
  out: string;
  opa: string | undefined;
  key: string | undefined;
  alg: (typeof SIGNING_ALGS)[number];
  from: string;
}): Promise<void> {
  mkdirSync(dirname(o.out), { recursive: true });
  const work = mkdtempSync(join(tmpdir(), "portier-bundle-"));
  try {
    const { revision, entrypoints } = await buildBundle({
      opa: opaPath(o.opa),
      projectDir: o.sources,
      workDir: o.sources === o.project ? join(o.project, "build") : work,
      out: o.out,
    });
    if (o.key !== undefined) writeFileSync(o.out, await signBundle(readFileSync(o.out), o.key, o.alg, o.out));
    console.log(
      `bundle ok: ${o.out}${o.from} (revision ${revision}; entrypoints ` +
        `${entrypoints.join(", ")}${o.key === undefined ? "" : `; signed ${o.alg}`})`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
