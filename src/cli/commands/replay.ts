/**
 * `portier replay --log FILE (--bundle FILE | --source REF) [--format text|md|json] [--fail-on any|new-allows]`:
 * what a candidate policy would have done to the decisions of a real decision log. Exit 0: nothing changes
 * (or, with --fail-on new-allows, nothing newly allowed); 1: changes; 2: no answer: usage, a source that cannot
 * be built, or a log that is no evidence (no decision replayed, or unreadable lines without --skip-unreadable).
 */
import { statSync } from "node:fs";
import {
  evidenceProblem,
  loadPolicySource,
  renderReplay,
  renderReplayMarkdown,
  replayLogFile,
} from "../../review/index.js";
import { OPA_OPTION, parse, usageError, type CommandSpec } from "../args.js";
import { messageOf, unreadable } from "../../errors/caught.js";
import { EXIT } from "../exit-codes.js";

export const SPEC = {
  name: "portier replay",
  summary:
    "Re-evaluates every decision of a decision log (portier serve's JSON lines) under a candidate policy and groups\n" +
    "what would change by route, flow, roles and reason, newly allowed first.",
  options: {
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

/** Refuses a log that is missing or not a file before anything is built. */
function readableFile(file: string): void {
  let isFile: boolean;
  try {
    isFile = statSync(file).isFile();
  } catch (err) {
    throw new Error(`--log: ${unreadable(file, err)}`);
  }
  if (!isFile) throw new Error(`--log: ${file}: is a folder, not a file`);
}

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parse(argv, SPEC);
  if (positionals.length > 0) throw usageError(SPEC, `unexpected argument ${positionals[0]}`);
  if (!values.log) throw usageError(SPEC, "--log FILE is required");
  const source = values.source ?? values.bundle;
  if (!source || (values.source && values.bundle)) throw usageError(SPEC, "give one of --bundle or --source");
  const format = values.format ?? "text";
  if (!["text", "md", "json"].includes(format))
    throw usageError(SPEC, `--format must be one of text, md, json, got "${format}"`);
  const failOn = values["fail-on"] ?? "any";
  if (failOn !== "any" && failOn !== "new-allows")
    throw usageError(SPEC, `--fail-on must be any or new-allows, got "${failOn}"`);
  try {
    readableFile(values.log);
    const engine = await loadPolicySource(source, { opa: values.opa });
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
