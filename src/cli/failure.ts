/**
 * What `portier` does with an error that reached main, told apart by class (instanceof), never by comparing
 * code strings: a HelpRequest prints the help on stdout and exits 0; any other error kept the command from
 * answering and exits 2 (exit-codes.ts: 1 is only ever a command's finding, which it returns, never throws).
 * Errors are one line (no stack trace); a PortierError's internal detail follows on its own line, since the
 * terminal is the operator's, as the log is.
 */
import { PortierError } from "../errors/portier-error.js";
import { HelpRequest } from "./args.js";
import { EXIT, type ExitCode } from "./exit-codes.js";

export interface Failure {
  exitCode: ExitCode;
  stdout?: string;
  stderr?: string;
}

export function failureOf(err: unknown): Failure {
  if (err instanceof HelpRequest) return { exitCode: EXIT.ok, stdout: err.text };
  const message = typeof err === "object" && err !== null && "message" in err ? err.message : undefined;
  const detail = err instanceof PortierError && err.detail !== undefined ? `\n  detail: ${err.detail}` : "";
  const stderr = `portier: ${typeof message === "string" ? message : String(err)}${detail}`;
  return { exitCode: EXIT.error, stderr };
}
