/**
 * `portier replay --log FILE (--bundle FILE | --source REF | --shadow) [--format text|md|json]
 * [--fail-on any|new-allows]`: what a candidate policy would have done to the decisions of a real decision log;
 * with --shadow, what the shadow candidate of `portier serve` did answer otherwise (the lines' `shadow` fields).
 * Exit 0: nothing changes (or, with --fail-on new-allows, nothing newly allowed); 1: changes; 2: no answer: usage,
 * a source that cannot be built, or a log that is no evidence (no decision replayed, or unreadable lines without
 * --skip-unreadable).
 */
import {
  evidenceProblem,
  loadPolicySource,
  renderReplay,
  renderReplayMarkdown,
  renderShadow,
  renderShadowMarkdown,
  replayLogFile,
  shadowLogFile,
} from "../../review/index.js";
import { resolveProject } from "../../toolchain/project.js";
import { OPA_OPTION, PROJECT_OPTION, parse, usageError, type CommandSpec } from "../args.js";
import { messageOf, unreadable } from "../../errors/caught.js";
import { regularFileStats } from "../../files/read-input-file.js";
import { EXIT } from "../exit-codes.js";

export const SPEC = {
  name: "portier replay",
  summary:
    "Re-evaluates every decision of a decision log (portier serve's JSON lines) under a candidate policy and groups\n" +
    "what would change by route, flow, roles and reason, newly allowed first. With --shadow, groups the same way\n" +
    "what the shadow candidate of portier serve --shadow-bundle answered otherwise (the log lines' shadow fields).",
  options: {
    project: PROJECT_OPTION,
    log: { type: "string", value: "FILE", description: "the decision log to replay (required)" },
    bundle: {
      type: "string",
      value: "FILE",
      description: "the candidate policy as a compiled bundle",
      default: "none",
    },
    source: {
      type: "string",
      value: "REF",
      description: "the candidate policy as a bundle, a policy folder or a git revision",
      default: "none",
    },
    shadow: {
      type: "boolean",
      description:
        "group the differences the shadow candidate of portier serve --shadow-bundle logged (no candidate to give)",
    },
    format: {
      type: "string",
      value: "FORMAT",
      description: "text, md (a pull-request comment) or json",
      default: "text",
    },
    "fail-on": {
      type: "string",
      value: "WHAT",
      description: "any (any change fails) or new-allows (only a newly allowed decision fails)",
      default: "any",
    },
    "skip-unreadable": {
      type: "boolean",
      description: "count lines that are not JSON and go on (a log that mixes other lines); without it they exit 2",
      default: "unreadable lines exit 2",
    },
    opa: OPA_OPTION,
  },
  exits: {
    ok: "nothing that --fail-on counts changes",
    finding: "changes (see --fail-on)",
  },
} as const satisfies CommandSpec;

/** Refuses a log that is missing or not a regular file before anything is built. */
function readableFile(file: string): void {
  try {
    regularFileStats(file);
  } catch (err) {
    throw new Error(`--log: ${unreadable(file, err)}`);
  }
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, SPEC);
  if (positionals.length > 0) throw usageError(SPEC, `unexpected argument ${positionals[0]}`);
  if (!values.log) throw usageError(SPEC, "--log FILE is required");
  const source = values.source ?? values.bundle;
  if (values.shadow && source) throw usageError(SPEC, "--shadow reads the log's own candidate: drop --bundle/--source");
  if (!values.shadow && (!source || (values.source && values.bundle)))
    throw usageError(SPEC, "give one of --bundle, --source or --shadow");
  const format = values.format ?? SPEC.options.format.default;
  if (!["text", "md", "json"].includes(format))
    throw usageError(SPEC, `--format must be one of text, md, json, got "${format}"`);
  const failOn = values["fail-on"] ?? SPEC.options["fail-on"].default;
  if (failOn !== "any" && failOn !== "new-allows")
    throw usageError(SPEC, `--fail-on must be any or new-allows, got "${failOn}"`);
  try {
    readableFile(values.log);
    if (!source) return await groupShadow(values.log, format, failOn, values["skip-unreadable"] === true);
    const engine = await loadPolicySource(source, { opa: values.opa, project: resolveProject(values.project).dir });
    const report = await replayLogFile(values.log, engine);
    process.stdout.write(
      format === "json"
        ? JSON.stringify(report, null, 2) + "\n"
        : format === "md"
          ? renderReplayMarkdown(report)
          : renderReplay(report),
    );
    const problem = evidenceProblem(report, { skipUnreadable: values["skip-unreadable"] === true });
    if (problem) {
      console.error(`portier replay: --log ${values.log}: ${problem}`);
      return EXIT.error;
    }
    const failing = failOn === "new-allows" ? report.newlyAllowed > 0 : report.changes.length > 0;
    return failing ? EXIT.finding : EXIT.ok;
  } catch (err) {
    console.error(`portier replay: ${messageOf(err)}`);
    return EXIT.error;
  }
}

/**
 * --shadow: the log's shadow differences. As for a replay, a log without a decision line, or with unreadable
 * lines (without --skip-unreadable), is no evidence: exit 2.
 */
async function groupShadow(log: string, format: string, failOn: string, skipUnreadable: boolean): Promise<number> {
  const report = await shadowLogFile(log);
  process.stdout.write(
    format === "json"
      ? JSON.stringify(report, null, 2) + "\n"
      : format === "md"
        ? renderShadowMarkdown(report)
        : renderShadow(report),
  );
  const first = report.malformed[0];
  const problem =
    report.decisions === 0
      ? `no decision line among ${report.lines} line(s) (not a portier serve decision log?)`
      : first && !skipUnreadable
        ? `${report.malformedCount} unreadable line(s), the first at line ${first.line}: ${first.error}; ` +
          "pass --skip-unreadable if the log mixes other lines on purpose"
        : undefined;
  if (problem) {
    console.error(`portier replay: --log ${log}: ${problem}`);
    return EXIT.error;
  }
  const failing = failOn === "new-allows" ? report.newlyAllowed > 0 : report.changes.length > 0;
  return failing ? EXIT.finding : EXIT.ok;
}
