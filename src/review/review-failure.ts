/**
 * The report of a review that could not answer (a side that does not parse or build, a log that is no evidence,
 * policy tests that did not run): the same report shape as an answer, every list empty, with the error and, where
 * the error has one, the place a person fixes (data/routes.json:LINE of the entry, a .rego file's line and column,
 * relative to the folder it is in, from the repository's top level when that is the project's), so every format
 * the caller asked for is written and CI annotates that line.
 */
import { isAbsolute, relative } from "node:path";
import { DataError } from "../catalog/index.js";
import { messageOf } from "../errors/caught.js";
import { BuildError, type SourceLocation } from "../toolchain/build-bundle.js";
import { PolicySourceError } from "./load-policy-source.js";
import type { FailOn, ReviewErrorLocation, ReviewReport } from "./review-report.js";

function causes(err: unknown): unknown[] {
  const out: unknown[] = [];
  for (let e = err; e instanceof Error && out.length < 10; e = e.cause) out.push(e);
  return out;
}

/** `roots`: folders a place is named from, each with the prefix naming it from the repository's top level. */
function located(file: string, line: number, column: number, roots: [string, string][]): ReviewErrorLocation {
  const root = roots.find(([r]) => isAbsolute(file) && !relative(r, file).startsWith(".."));
  return {
    file: root ? `${root[1]}${relative(root[0], file)}` : file,
    line: Math.max(1, line),
    ...(column > 0 ? { column } : {}),
  };
}

/**
 * The place an error names: a DataError's entry, or opa check's first problem; `roots` are the sides' folders.
 * `project`: the project folder and its path from its repository's top level ("" at the top), which also names
 * a git revision's export of it.
 */
export function errorLocation(
  err: unknown,
  roots: string[],
  project?: { dir: string; prefix: string },
): ReviewErrorLocation | undefined {
  const chain = causes(err);
  const prefix = project?.prefix ?? "";
  const all: [string, string][] = [
    ...roots.map((r): [string, string] => [r, ""]),
    ...(project ? [[project.dir, prefix] as [string, string]] : []),
    ...chain.flatMap((e) => (e instanceof PolicySourceError && e.sourceRoot ? [[e.sourceRoot, prefix]] : [])),
  ] as [string, string][];
  for (const e of chain) {
    if (e instanceof DataError && e.line !== undefined) return located(e.file, e.line, e.column ?? 0, all);
    const first: SourceLocation | undefined = e instanceof BuildError ? e.locations[0] : undefined;
    if (first) return located(first.file, first.line, first.column, all);
  }
  return undefined;
}

export function failedReport(input: {
  base: string;
  head: string | undefined;
  failOn: FailOn;
  err: unknown;
  roots: string[];
  project?: { dir: string; prefix: string };
}): ReviewReport {
  const message = messageOf(input.err);
  const location = errorLocation(input.err, input.roots, input.project);
  const side = (ref: string) => ({ ref, kind: "unknown", revision: "" });
  return {
    summary: `the review could not answer: ${message.split("\n")[0] ?? ""}`,
    base: side(input.base),
    head: side(input.head ?? "working tree"),
    failOn: input.failOn,
    failing: true,
    findings: [message],
    grants: { gained: 0, highRisk: 0, lost: 0 },
    routesAdded: [],
    routesRemoved: [],
    rows: [],
    tests: null,
    replay: null,
    error: { message, ...(location ? { location } : {}) },
  };
}
