/**
 * `portier review BASE [HEAD]` as a function: opens both sides (review-sides.ts), runs the policy tests with
 * coverage on HEAD's sources, computes both access matrices over the same probes and diffs them, replays each
 * decision log under HEAD, and builds the report (review-report.ts) that the renderers print.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { writeBundleData } from "../toolchain/build-bundle.js";
import { opaPath } from "../toolchain/opa.js";
import { runPolicyTests } from "../toolchain/run-policy-tests.js";
import { computeMatrix, probeUniverse } from "./compute-matrix.js";
import { diffMatrices } from "./diff-matrices.js";
import { replayLogFile, type ReplayReport } from "./replay.js";
import { CauseFinder } from "./review-locate.js";
import { directoryHolders, SideAccess, type Holder } from "./review-people.js";
import { buildReport, type FailOn, type ReviewReport, type ReviewTests } from "./review-report.js";
import { messageOf } from "../errors/caught.js";
import { openSide, ReviewSourceError, type ReviewSide } from "./review-sides.js";
import { inRepository } from "./review-in-repository.js";
import { repositoryPlace } from "../toolchain/export-revision.js";

export interface ReviewOptions {
  base: string;
  head?: string | undefined;
  /** The project folder: HEAD's working tree and the git repository revisions are read from. */
  project: string;
  opa?: string | undefined;
  logs: string[];
  /** Accept log lines that are not JSON (counted and skipped) instead of refusing the log. */
  allowOtherLines: boolean;
  failOn: FailOn;
  /** The policy tests' coverage required, in percent. */
  minCoverage: number;
  /** The synced-users directory whose people a grant change reaches; default the project's sample, when present. */
  directory?: string | undefined;
}

/** The project's sample directory, read for the people when --directory is not given. */
export const SAMPLE_DIRECTORY = join("data", "sample", "directory.json");

async function readDirectory(opts: ReviewOptions): Promise<Holder[] | null> {
  const file = opts.directory ?? join(opts.project, SAMPLE_DIRECTORY);
  if (opts.directory === undefined && !existsSync(file)) return null;
  try {
    return await directoryHolders(file);
  } catch (err) {
    throw new ReviewSourceError(`--directory ${file}: ${messageOf(err)}`, { cause: err });
  }
}

async function headTests(side: ReviewSide, opa: string | undefined, minCoverage: number): Promise<ReviewTests | null> {
  const folder = side.folder;
  if (!folder) return null;
  const work = mkdtempSync(join(tmpdir(), "portier-review-tests-"));
  try {
    const data = writeBundleData(folder, join(work, "bundle-data"));
    const report = await runPolicyTests({ opa: opaPath(opa), projectDir: folder, dataDir: data.dir });
    const named = (s: string) => (side.kind === "git" ? s.split(`${folder}/`).join(`${side.ref}:`) : s);
    return {
      passed: report.passed,
      minCoverage,
      failed: report.failed.map((c) => ({
        name: c.name,
        location: named(c.location),
        file: c.file ? relative(folder, c.file) : "",
        line: c.line,
        // opa reports an error only when the test could not be evaluated, and no values: a false condition is said
        // as such, with what the test printed (a test that prints its expected and actual values shows them here).
        error:
          named(c.error) ||
          `the test's condition was false or undefined${c.output.trim() ? `; it printed: ${c.output.trim()}` : ""}`,
      })),
      coverage: report.coverage,
    };
  } catch (err) {
    throw new ReviewSourceError(`HEAD ${side.ref}: the policy tests did not run: ${messageOf(err)}`, { cause: err });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function replayLog(file: string, side: ReviewSide, allowOtherLines: boolean): Promise<ReplayReport> {
  if (!existsSync(file)) throw new ReviewSourceError(`--log ${file}: not found: ${file}`);
  const report = await replayLogFile(file, side.engine);
  const first = report.malformed[0];
  if (first && !allowOtherLines)
    throw new ReviewSourceError(
      `--log ${file}: ${report.malformedCount} line(s) are not JSON, the first at line ${first.line}; ` +
        "pass --allow-other-lines for a log that mixes other output",
    );
  if (report.replayed + report.notReplayable === 0)
    throw new ReviewSourceError(`--log ${file}: no decision read (${report.lines} line(s)); is it a decision log?`);
  return report;
}

export async function review(opts: ReviewOptions): Promise<ReviewReport> {
  const sides: ReviewSide[] = [];
  try {
    const base = await openSide("BASE", opts.base, opts);
    sides.push(base);
    const head = await openSide("HEAD", opts.head, opts);
    sides.push(head);
    const logs: { file: string; report: ReplayReport }[] = [];
    for (const file of opts.logs) logs.push({ file, report: await replayLog(file, head, opts.allowOtherLines) });
    const tests = await headTests(head, opts.opa, opts.minCoverage);
    // Both sides are probed with every tenant and code either knows, so a moved binding shows.
    const universe = probeUniverse(base.engine, head.engine);
    const baseMatrix = computeMatrix(base.engine, universe);
    const headMatrix = computeMatrix(head.engine, universe);
    const info = (s: ReviewSide) => ({
      ref: s.ref,
      kind: s.kind,
      ...(s.commit ? { commit: s.commit } : {}),
      revision: s.engine.revision,
    });
    const directory = await readDirectory(opts);
    const seen = logs.length > 0 ? logs.flatMap((l) => l.report.callers) : null;
    const people = {
      directory,
      seen,
      base: new SideAccess(baseMatrix, base.engine.roles),
      head: new SideAccess(headMatrix, head.engine.roles),
    };
    const report = buildReport({
      people,
      base: info(base),
      head: info(head),
      baseMatrix,
      headMatrix,
      diff: diffMatrices(baseMatrix, headMatrix),
      causes: new CauseFinder(base.folder, head.folder),
      tests,
      logs: opts.logs.length > 0 ? logs : null,
      failOn: opts.failOn,
    });
    // Every place is relative to the project folder when both sides are of its repository: name them from the top.
    const ofRepository = (s: ReviewSide) => s.kind === "git" || s.kind === "working tree";
    const prefix = ofRepository(base) && ofRepository(head) ? (repositoryPlace(opts.project)?.prefix ?? "") : "";
    return inRepository(report, prefix);
  } finally {
    for (const s of sides) s.close();
  }
}
