/**
 * Builds the wasm bundle from a project folder (policies/ + data/): validates data/, writes the data
 * document, runs `opa check --strict` and `opa build -t wasm` with the entrypoints that the policies declare
 * themselves (`# METADATA` with `entrypoint: true`, read back with `opa inspect --annotations`), then evaluates
 * every route of the catalog once with the compiled policy (check-routes.ts). The revision is a digest of the
 * policy files and the data document, so the same sources always give the same revision: the review tools
 * compare it with the sources' own (sourcesRevision) to tell a stale bundle by content, not by file times.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { PortierError } from "../errors/portier-error.js";
import { loadCatalog, bundleData, type RouteEntry } from "../catalog/index.js";
import { loadEngine, LOG_RULES_ENTRYPOINT, READS_KEY, READS_ROOT } from "../engine/index.js";
import { runOpa } from "./opa.js";
import { checkRoutes } from "./check-routes.js";
import { logRulesReads } from "./log-rules-reads.js";
import { projectAt, regoFiles } from "./project.js";

/** Where opa found a problem: the file as opa names it, 1-based line and column (0 when opa gives none). */
export interface SourceLocation {
  file: string;
  line: number;
  column: number;
}

export class BuildError extends PortierError {
  static override readonly code = "build_failed";
  /** The problems' places, when opa gave them (opa check's JSON report). */
  locations: SourceLocation[] = [];
}

interface OpaCheckReport {
  errors?: { message?: string; code?: string; location?: { file?: string; row?: number; col?: number } }[];
}

/** opa check's JSON report as a BuildError with each problem's place; its own text when it is not that report. */
function checkFailure(output: string): BuildError {
  let report: OpaCheckReport | undefined;
  try {
    report = JSON.parse(output) as OpaCheckReport;
  } catch {
    report = undefined;
  }
  const errors = Array.isArray(report?.errors) ? report.errors : [];
  if (errors.length === 0) return new BuildError(`opa check --strict failed:\n${output}`);
  const lines = errors.map((e) => {
    const l = e.location;
    const at = l?.file ? `${l.file}:${l.row ?? 0}${l.col ? `:${l.col}` : ""}: ` : "";
    return `${at}${e.code ?? "error"}: ${e.message ?? ""}`;
  });
  const err = new BuildError(`opa check --strict failed:\n${lines.join("\n")}`);
  err.locations = errors.flatMap((e) =>
    e.location?.file ? [{ file: e.location.file, line: e.location.row ?? 0, column: e.location.col ?? 0 }] : [],
  );
  return err;
}

/** What opa leaves out of the policies folder: the tests, and the decision input's JSON schema (it is not data). */
export const OPA_IGNORES = ["--ignore", "*_test.rego", "--ignore", "*.schema.json"];

/** The policy files of a folder, its tests left out. */
function policyFiles(dir: string): string[] {
  return regoFiles(dir).filter((f) => !f.endsWith("_test.rego"));
}

/** Writes <outDir>/catalog/data.json from <projectDir>/data; returns the folder to pass to opa. */
export function writeBundleData(
  projectDir: string,
  outDir: string,
): { dir: string; json: string; routes: RouteEntry[] } {
  const { json, routes } = dataDocument(projectDir);
  mkdirSync(join(outDir, "catalog"), { recursive: true });
  writeFileSync(join(outDir, "catalog", "data.json"), json);
  return { dir: outDir, json, routes };
}

/** The bundle's data document (data.catalog) built from <projectDir>/data, as JSON. */
function dataDocument(projectDir: string): { json: string; routes: RouteEntry[] } {
  const catalog = loadCatalog(join(projectDir, "data"));
  return { json: JSON.stringify(bundleData(catalog).catalog), routes: catalog.routes };
}

/**
 * The revision a bundle built from <projectDir> now would carry, without building it: what it depends on
 * (the policies but their tests, the data document). Throws DataError when data/ does not load.
 */
export function sourcesRevision(projectDir: string): string {
  return sourceRevision(projectDir, dataDocument(projectDir).json);
}

function sourceRevision(projectDir: string, dataJson: string): string {
  const hash = createHash("sha256");
  const policies = projectAt(projectDir).policyDir;
  for (const file of policyFiles(policies)) {
    hash
      .update(relative(dirname(policies), file))
      .update("\0")
      .update(readFileSync(file))
      .update("\0");
  }
  hash.update(dataJson);
  return hash.digest("hex").slice(0, 12);
}

interface InspectAnnotation {
  annotations?: { entrypoint?: boolean };
  location?: { file?: string };
  path?: { type: string; value: unknown }[];
}

/** The entrypoints of policies written before they were annotated (review tools building an old revision). */
export const UNANNOTATED_ENTRYPOINTS = ["portier/catalog", "portier/decision"];

/**
 * The entrypoints declared in the policies' `# METADATA` (`entrypoint: true`), as `package/rule` paths,
 * sorted. Annotations in test files do not count. Fails when opa cannot read the policies, or when none is
 * declared and no `unannotated` list is given to use instead.
 */
export async function annotatedEntrypoints(
  opa: string,
  policiesDir: string,
  unannotated?: string[],
): Promise<string[]> {
  const inspected = await runOpa(opa, ["inspect", "--annotations", "--format", "json", policiesDir]);
  if (inspected.code !== 0)
    throw new BuildError(`opa inspect failed:\n${(inspected.stderr || inspected.stdout).trim()}`);
  const annotations = (JSON.parse(inspected.stdout) as { annotations?: InspectAnnotation[] }).annotations ?? [];
  const entrypoints = annotations
    .filter((a) => a.annotations?.entrypoint === true && !a.location?.file?.endsWith("_test.rego"))
    .map((a) =>
      (a.path ?? [])
        .slice(1)
        .map((term) => String(term.value))
        .join("/"),
    );
  if (entrypoints.length === 0 && unannotated) return unannotated;
  if (entrypoints.length === 0)
    throw new BuildError(`${policiesDir}: no rule or package is annotated "# METADATA" with "entrypoint: true"`);
  return [...new Set(entrypoints)].sort();
}

/**
 * `unannotated`: the entrypoints to use when no policy is annotated (old revisions); without it, a build
 * with no annotated entrypoint is refused.
 */
export async function buildBundle(opts: {
  opa: string;
  projectDir: string;
  workDir: string;
  out: string;
  unannotated?: string[];
}): Promise<{ revision: string; entrypoints: string[] }> {
  const data = writeBundleData(opts.projectDir, join(opts.workDir, "bundle-data"));
  const policies = projectAt(opts.projectDir).policyDir;
  const check = await runOpa(opts.opa, ["check", "--strict", "--format", "json", policies, data.dir]);
  if (check.code !== 0) throw checkFailure((check.stdout || check.stderr).trim());
  const revision = sourceRevision(opts.projectDir, data.json);
  const entrypoints = await annotatedEntrypoints(opts.opa, policies, opts.unannotated);
  // What the decision-log rules read of an event (log-rules-reads.ts), as a data root of its own.
  const readsDir = join(data.dir, READS_ROOT);
  rmSync(readsDir, { recursive: true, force: true });
  if (entrypoints.includes(LOG_RULES_ENTRYPOINT)) {
    const sources = policyFiles(policies).map((f) => readFileSync(f, "utf8"));
    const reads = await logRulesReads(opts.opa, [...OPA_IGNORES, "-d", policies, "-d", data.dir], sources);
    if (reads !== null) {
      mkdirSync(readsDir, { recursive: true });
      writeFileSync(join(readsDir, "data.json"), JSON.stringify({ [READS_KEY]: reads }));
    }
  }
  // Written beside `out` and renamed once checked, so a refused build leaves no bundle (nor replaces the last).
  const unchecked = `${opts.out}.${process.pid}.unchecked`;
  const args = [
    "build",
    "-t",
    "wasm",
    ...entrypoints.flatMap((e) => ["-e", e]),
    ...OPA_IGNORES,
    "-r",
    revision,
    "-o",
    unchecked,
    policies,
    data.dir,
  ];
  try {
    const built = await runOpa(opts.opa, args);
    if (built.code !== 0) throw new BuildError(`opa build failed:\n${(built.stderr || built.stdout).trim()}`);
    checkRoutes(await loadEngine(unchecked, { source: opts.out }), data.routes, join(opts.projectDir, "data"));
    renameSync(unchecked, opts.out);
  } finally {
    rmSync(unchecked, { force: true });
  }
  return { revision, entrypoints };
}
