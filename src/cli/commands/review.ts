/**
 * `portier review BASE [HEAD]`: a policy change reviewed in one command, for a pull request. Builds both sides
 * (git revisions, policy folders or bundles; HEAD defaults to the working tree), runs the policy tests on HEAD,
 * compares the grants and replays recorded decisions under HEAD; prints one report (md, json, sarif, junit) and,
 * inside GitHub Actions, workflow annotations. Exit 0: nothing --fail-on fails on; 1: it does (or a policy test
 * failed); 2: the review could not answer (usage, a side not found or not built, an unreadable log). A review
 * that could not answer after its options were read still writes its report (the error, at its file and line).
 */
import { statSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import {
  FAIL_ON,
  failedReport,
  renderAnnotations,
  renderReviewJunit,
  renderReviewMarkdown,
  renderReviewSarif,
  review,
  type ReviewReport,
} from "../../review/index.js";
import { resolveProject } from "../../toolchain/project.js";
import { repositoryPlace } from "../../toolchain/export-revision.js";
import {
  OPA_OPTION,
  PROJECT_OPTION,
  isOneOf,
  minCoverageOption,
  parse,
  usageError,
  type CommandSpec,
} from "../args.js";
import { messageOf } from "../../errors/caught.js";
import { EXIT } from "../exit-codes.js";
import { packageVersion } from "../../files/package-version.js";

const FORMATS = ["md", "json", "sarif", "junit"] as const;
type Format = (typeof FORMATS)[number];

/** --output FILE: the format from the file's name. */
const EXTENSIONS: [RegExp, Format][] = [
  [/\.md$/, "md"],
  [/\.sarif(\.json)?$/, "sarif"],
  [/\.json$/, "json"],
  [/\.xml$/, "junit"],
];

export const SPEC = {
  name: "portier review",
  positionals: "BASE [HEAD]",
  summary:
    "Reviews a policy change in one report: builds BASE and HEAD (git revisions, policy folders or bundle files;\n" +
    "HEAD defaults to the working tree), runs the policy tests with coverage on HEAD, compares who may call what\n" +
    "(roles, tenants, methods, token shapes) and replays recorded decisions under HEAD (--log).",
  options: {
    format: {
      type: "string",
      value: "FORMAT",
      description: "what stdout gets: md (a pull-request comment), json, sarif (SARIF 2.1.0) or junit",
      default: "md",
    },
    output: {
      type: "string",
      multiple: true,
      value: "FILE",
      description: "also write the report to FILE, in the format of its name: .md, .json, .sarif, .xml (JUnit)",
    },
    log: {
      type: "string",
      multiple: true,
      value: "FILE",
      description: "a decision log (portier serve's JSON lines) to replay under HEAD",
    },
    "allow-other-lines": {
      type: "boolean",
      description: "count and skip log lines that are not JSON instead of refusing the log",
      default: "refuse",
    },
    "fail-on": {
      type: "string",
      value: "WHAT",
      description:
        "exit 1 on: new-allows (a grant gained or a recorded call newly allowed), high-risk (such a change for " +
        "callers outside the role lists), any-change",
      default: "new-allows",
    },
    "min-coverage": {
      type: "string",
      value: "PERCENT",
      description: "the policy tests on HEAD fail below this coverage (a number from 0 to 100)",
      default: "100",
    },
    directory: {
      type: "string",
      value: "FILE",
      description:
        "the synced-users directory (JSON array or NDJSON) whose people a grant change reaches, listed per change",
      default: "PROJECT/data/sample/directory.json when present",
    },
    project: PROJECT_OPTION,
    opa: OPA_OPTION,
  },
  exits: {
    ok: "nothing --fail-on names, and the policy tests pass",
    finding: "--fail-on matched, or a policy test failed",
  },
  notes: "environment: GITHUB_ACTIONS=true also prints one workflow annotation per change on stderr",
} as const satisfies CommandSpec;

function render(report: ReviewReport, format: Format): string {
  switch (format) {
    case "md":
      return renderReviewMarkdown(report);
    case "json":
      return JSON.stringify(report, null, 2) + "\n";
    case "sarif":
      return renderReviewSarif(report, packageVersion());
    case "junit":
      return renderReviewJunit(report);
  }
}

function outputFormat(file: string): Format {
  const found = EXTENSIONS.find(([re]) => re.test(file));
  if (!found) throw usageError(SPEC, `--output ${file}: name the file .md, .json, .sarif or .xml (JUnit)`);
  return found[1];
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, SPEC);
  const [base, head] = positionals;
  if (base === undefined || positionals.length > 2)
    throw usageError(SPEC, `expected BASE and an optional HEAD, got ${positionals.length} argument(s)`);
  const format = values.format ?? SPEC.options.format.default;
  if (!isOneOf(FORMATS, format))
    throw usageError(SPEC, `--format must be one of ${FORMATS.join(", ")}, got "${format}"`);
  const failOn = values["fail-on"] ?? SPEC.options["fail-on"].default;
  if (!isOneOf(FAIL_ON, failOn))
    throw usageError(SPEC, `--fail-on must be one of ${FAIL_ON.join(", ")}, got "${failOn}"`);
  const min = minCoverageOption(SPEC, values["min-coverage"]);
  const outputs = (values.output ?? []).map((file) => [file, outputFormat(file)] as const);
  const project = resolveProject(values.project).dir;
  let report: ReviewReport;
  try {
    report = await review({
      base,
      head,
      project,
      opa: values.opa,
      logs: values.log ?? [],
      allowOtherLines: values["allow-other-lines"] === true,
      failOn,
      minCoverage: min,
      directory: values.directory,
    });
  } catch (err) {
    // No answer is still a report, in every format asked, so CI posts it and annotates the line at fault.
    console.error(`portier review: ${messageOf(err)}`);
    const folders = [base, head].flatMap((s) => (s !== undefined && isDirectory(s) ? [resolve(s)] : []));
    // A place in the project (its working tree or a revision of it) is named from the repository's top level.
    const prefix = repositoryPlace(project)?.prefix ?? "";
    report = failedReport({ base, head, failOn, err, roots: folders, project: { dir: project, prefix } });
  }
  try {
    for (const [file, f] of outputs) writeFileSync(file, render(report, f));
  } catch (err) {
    console.error(`portier review: ${messageOf(err)}`);
    return EXIT.error;
  }
  process.stdout.write(render(report, format));
  if (process.env.GITHUB_ACTIONS === "true") for (const line of renderAnnotations(report)) console.error(line);
  return report.error ? EXIT.error : report.failing ? EXIT.finding : EXIT.ok;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
