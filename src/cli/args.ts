/**
 * Small helpers shared by the CLI commands: option parsing with errors that name the option, and the
 * UsageError that main turns into exit code 2 without a stack trace.
 */
import { parseArgs, type ParseArgsConfig } from "node:util";

export class UsageError extends Error {
  readonly code = "usage";
}

export function parse<const O extends NonNullable<ParseArgsConfig["options"]>>(argv: string[], options: O, usage: string) {
  try {
    return parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${usage}`);
  }
}
