#!/usr/bin/env node
/**
 * The `portier` command (run-command.ts): one sub-command per file in ./commands, loaded on demand. Errors are printed
 * as one line (no stack trace); exit codes (exit-codes.ts): 0 success, 1 the command's finding (a deny, a
 * change, a failed test), 2 the command could not answer. The process exits as soon as the command is done,
 * so nothing left open can keep it alive.
 */
import { runCommand } from "./run-command.js";

/**
 * Exits once stdout and stderr are flushed: when they are pipes, writes are asynchronous, and an immediate
 * process.exit() would cut off what a command printed last (its closing line, under load).
 */
function exit(code: number): void {
  process.stdout.write("", () => process.stderr.write("", () => process.exit(code)));
}

void runCommand(process.argv.slice(2)).then(exit);
