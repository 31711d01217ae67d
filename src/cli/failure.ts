/**
 * What `portier` does with an error that reached main, told apart by class (instanceof), never by comparing
 * code strings: a HelpRequest prints the help on stdout and exits 0, a UsageError exits 2, anything else 1.
 * Errors are one line (no stack trace); a PortierError's internal detail follows on its own line, since the
 * terminal is the operator's, as the log is.
 */
import { PortierError } from "../errors/portier-error.js";
import { HelpRequest, UsageError } from "./args.js";

export interface Failure {
  exitCode: 0 | 1 | 2;
  stdout?: string;
  stderr?: string;
}

export function failureOf(err: unknown): Failure {
  if (err instanceof HelpRequest) return { exitCode: 0, stdout: err.text };
  const message = typeof err === "object" && err !== null && "message" in err ? err.message : undefined;
  const detail = err instanceof PortierError && err.detail !== undefined ? `\n  detail: ${err.detail}` : "";
  const stderr = `portier: ${typeof message === "string" ? message : String(err)}${detail}`;
  return { exitCode: err instanceof UsageError ? 2 : 1, stderr };
}
