/**
 * docs/reference/commands.md from each command's own definition: `portier --help` lists the commands, and
 * `portier <command> --help` (rendered from the option table the command parses its arguments with) gives each
 * one's usage, options, defaults and exit codes. Runs the built command (dist/cli/main.js, what `portier` is
 * after `npm link`), so it needs `npx tsc -p tsconfig.json` first (the Makefile's target does it).
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { GENERATED_NOTE } from "./markdown.js";

const PORTIER = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

/** What a command line prints on stdout, and its exit code. */
function captured(argv: string[]): { code: number; out: string } {
  const run = spawnSync(process.execPath, [PORTIER, ...argv], { encoding: "utf8", timeout: 30_000 });
  if (run.error) throw run.error;
  return { code: run.status ?? 1, out: `${run.stdout}${run.stderr}` };
}

/** The command names `portier --help` lists under "commands:". */
function commandNames(usage: string): [string, string][] {
  const listed = usage.split("\ncommands:\n")[1]?.split("\n\n")[0] ?? "";
  return listed
    .split("\n")
    .map((line) => /^\s+(\S+)\s+(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => [m[1]!, m[2]!]);
}

export function commandsReference(): string {
  const top = captured(["--help"]);
  if (top.code !== 0) throw new Error(`portier --help exited ${top.code}`);
  const commands = commandNames(top.out);
  if (commands.length === 0) throw new Error("portier --help listed no commands");
  const sections: string[] = [];
  for (const [name, summary] of commands) {
    const help = captured([name, "--help"]);
    if (help.code !== 0) throw new Error(`portier ${name} --help exited ${help.code}: ${help.out}`);
    sections.push(`## portier ${name}`, "", `${summary[0]!.toUpperCase()}${summary.slice(1)}.`, "");
    sections.push("```text", help.out.trimEnd(), "```", "");
  }
  return [
    "# Commands",
    "",
    GENERATED_NOTE,
    "",
    "Every `portier` command, with the help it prints (`portier <command> --help`). After `npm link` (or through",
    "`npx portier`) they are typed as shown. Exit codes of every command: 0 done, 1 failure (for `explain` a deny,",
    "for `diff` and `replay` a change), 2 a usage or configuration error.",
    "",
    ...commands.map(([name, summary]) => `- [\`portier ${name}\`](#portier-${name}): ${summary}`),
    "",
    "```text",
    top.out.trimEnd(),
    "```",
    "",
    ...sections,
  ].join("\n");
}
