/**
 * `portier replay --log FILE (--bundle FILE | --source REF) [--format text|md|json] [--fail-on any|new-allows]`:
 * what a candidate policy would have done to the decisions of a real decision log. Exit 0: nothing changes
 * (or, with --fail-on new-allows, nothing newly allowed); 1: changes; 2: error.
 */
import { existsSync } from "node:fs";
import { loadPolicySource, renderReplay, renderReplayMarkdown, replayLogFile } from "../../review/index.js";
import { parse, UsageError } from "../args.js";

const USAGE = "usage: portier replay --log FILE (--bundle FILE | --source BUNDLE|FOLDER|GIT-REV) [--format text|md|json] [--fail-on any|new-allows] [--opa PATH]";

export async function run(argv: string[]): Promise<number> {
  try {
    const { values, positionals } = parse(
      argv,
      { log: { type: "string" }, bundle: { type: "string" }, source: { type: "string" }, format: { type: "string" }, "fail-on": { type: "string" }, opa: { type: "string" } },
      USAGE,
    );
    if (positionals.length > 0 || !values.log) throw new UsageError(USAGE);
    const source = values.source ?? values.bundle;
    if (!source || (values.source && values.bundle)) throw new UsageError(`give one of --bundle or --source\n${USAGE}`);
    const format = values.format ?? "text";
    if (!["text", "md", "json"].includes(format)) throw new UsageError(`--format must be one of text, md, json\n${USAGE}`);
    const failOn = values["fail-on"] ?? "any";
    if (failOn !== "any" && failOn !== "new-allows") throw new UsageError(`--fail-on must be any or new-allows\n${USAGE}`);
    if (!existsSync(values.log)) throw new Error(`--log ${values.log}: file not found`);
    const engine = await loadPolicySource(source, { opa: values.opa });
    const report = await replayLogFile(values.log, engine);
    process.stdout.write(format === "json" ? JSON.stringify(report, null, 2) + "\n" : format === "md" ? renderReplayMarkdown(report) : renderReplay(report));
    const failing = failOn === "new-allows" ? report.newlyAllowed > 0 : report.changes.length > 0;
    return failing ? 1 : 0;
  } catch (err) {
    console.error(`portier replay: ${(err as Error).message}`);
    return 2;
  }
}
