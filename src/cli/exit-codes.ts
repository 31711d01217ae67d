/**
 * The exit codes of every `portier` command, in one place: 0 success (allowed, no change, passed), 1 the
 * finding the command exists to report (denied, changes, failed tests), 2 anything that kept the command from
 * answering (usage, broken data or policy, a missing file, a stale bundle, a log with no evidence, a start-up
 * failure). A script can then tell "the answer is no" from "there is no answer": `! portier explain ...` fails
 * on broken data instead of passing. Each command's --help renders its own table with exitCodesHelp.
 */

export const EXIT = { ok: 0, finding: 1, error: 2 } as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** What 0 and (for commands that report one) 1 mean for one command; 2 means the same everywhere. */
export interface ExitMeanings {
  ok: string;
  finding?: string;
}

export const ERROR_MEANING =
  "no answer: a usage error, a missing or broken input (data/, policies, a stale bundle, a log without evidence), " +
  "a failed start";

/** The exit-code lines of a command's --help. */
export function exitCodesHelp(exits: ExitMeanings): string {
  return [
    "exit codes:",
    `  0  ${exits.ok}`,
    ...(exits.finding === undefined ? [] : [`  1  ${exits.finding}`]),
    `  2  ${ERROR_MEANING}`,
  ].join("\n");
}
