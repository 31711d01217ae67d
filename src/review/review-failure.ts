/**
 * The report of a review that could not answer (a side that does not parse or build, a log that is no evidence,
 * policy tests that did not run): the same report shape as an answer, every list empty, with the error and, where
 * the error has one, the place a person fixes (data/routes.json:LINE of the entry, a .rego file's line and column,
 * relative to the project), so every format the caller asked for is written and CI annotates that line.
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

function located(file: string, line: number, column: number, roots: string[]): ReviewErrorLocation {
  const root = roots.find((r) => isAbsolute(file) && !relative(r, file).startsWith(".."));
  return { file: root ? relative(root, file) : file, line: Math.max(1, line), ...(column > 0 ? { column } : {}) };
}

/** The place an error names: a DataError's entry, or opa check's first problem; `roots` are the sides' folders. */
export function errorLocation(err: unknown, roots: string[]): ReviewErrorLocation | undefined {
  const chain = causes(err);
  const all = [
    ...roots,
    ...chain.flatMap((e) => (e instanceof PolicySourceError && e.sourceRoot ? [e.sourceRoot] : [])),
  ];
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
}): ReviewReport {
  const message = messageOf(input.err);
  const location = errorLocation(input.err, input.roots);
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
