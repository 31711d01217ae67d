/**
 * Option tables shared by the CLI commands: each command declares its options once (name, type, a one-line
 * description, the default) and the same table both parses argv and renders `--help`, so the help cannot
 * drift from what is accepted. Usage errors (UsageError) exit 2; `--help`/`-h` (HelpRequest) prints the help
 * on stdout and exits 0. Both are turned into exit codes by main.
 */
import { parseArgs } from "node:util";
import { PortierError } from "../errors/portier-error.js";
import { didYouMean } from "../text/did-you-mean.js";
import { messageOf } from "../errors/caught.js";

export class UsageError extends PortierError {
  static override readonly code = "usage";
}

/** Thrown when `--help` or `-h` is given; main prints `text` on stdout and exits 0. */
export class HelpRequest extends PortierError {
  static override readonly code = "help";
  constructor(readonly text: string) {
    super("help requested");
  }
}

export interface OptionSpec {
  type: "string" | "boolean";
  /** One line: what the option does. */
  description: string;
  /** The placeholder shown after the flag, e.g. FILE or N (string options). */
  value?: string;
  /** The default, as shown in the help (omitted: none). */
  default?: string;
  multiple?: boolean;
  short?: string;
}

export interface CommandSpec {
  /** e.g. "portier matrix" */
  name: string;
  /** What follows the name and options in the usage line, e.g. "METHOD PATH". */
  positionals?: string;
  /** One or more lines saying what the command does. */
  summary: string;
  options: Record<string, OptionSpec>;
  /** Extra lines after the options (environment variables, exit codes). */
  notes?: string;
}

/** Options several commands share, described once. */
export const OPA_OPTION = {
  type: "string",
  value: "PATH",
  description: "the opa binary (builds policy folders and git revisions)",
  default: "$PORTIER_OPA, else the pinned version found or built by tools/ensure-opa.sh",
} as const satisfies OptionSpec;
export const PROJECT_OPTION = {
  type: "string",
  value: "DIR",
  description: "the project folder holding policies/ and data/",
  default: "this repository",
} as const satisfies OptionSpec;

const HELP_OPTION: OptionSpec = { type: "boolean", short: "h", description: "show this help and exit" };

/** The one-line usage: name, [options], positionals. */
export function usageLine(spec: CommandSpec): string {
  return `usage: ${spec.name} [options]${spec.positionals ? ` ${spec.positionals}` : ""}`;
}

/** The whole help: usage, summary, one line per option with its default, notes. */
export function renderHelp(spec: CommandSpec): string {
  const options = { ...spec.options, help: HELP_OPTION };
  const left = Object.entries(options).map(([name, o]) => {
    const flag = `${o.short ? `-${o.short}, ` : "    "}--${name}${o.type === "string" ? ` ${o.value ?? "VALUE"}` : ""}`;
    return { flag, o };
  });
  const width = Math.min(34, Math.max(...left.map((l) => l.flag.length)));
  const lines = left.map(({ flag, o }) => {
    const text = `${o.description}${o.multiple ? " (repeatable)" : ""}${o.default !== undefined ? ` (default: ${o.default})` : ""}`;
    return flag.length > width ? `  ${flag}\n  ${" ".repeat(width)}  ${text}` : `  ${flag.padEnd(width)}  ${text}`;
  });
  return [usageLine(spec), "", spec.summary, "", "options:", ...lines, ...(spec.notes ? ["", spec.notes] : [])].join(
    "\n",
  );
}

type ParseOptions = Record<string, { type: "string" | "boolean"; multiple?: boolean; short?: string }>;

/** Parses argv with the command's table; throws HelpRequest for --help/-h and UsageError naming the bad option. */
export function parse<const O extends Record<string, OptionSpec>>(argv: string[], spec: CommandSpec & { options: O }) {
  const options: ParseOptions = { help: { type: "boolean", short: "h" } };
  for (const [name, o] of Object.entries(spec.options)) {
    options[name] = { type: o.type, ...(o.multiple ? { multiple: true } : {}), ...(o.short ? { short: o.short } : {}) };
  }
  if (argv.includes("--help") || argv.includes("-h")) throw new HelpRequest(renderHelp(spec));
  try {
    const r = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
    return r as unknown as {
      values: {
        [K in keyof O]?: O[K] extends { type: "boolean" }
          ? boolean
          : O[K] extends { multiple: true }
            ? string[]
            : string;
      };
      positionals: string[];
    };
  } catch (err) {
    const unknown = /^Unknown option '(--[^']+)'/.exec(messageOf(err))?.[1];
    const hint = unknown
      ? didYouMean(
          unknown,
          Object.keys(options).map((o) => `--${o}`),
          (s) => s,
        )
      : "";
    throw usageError(spec, `${messageOf(err)}${hint}`);
  }
}

/** Whether a value given on the command line is one of the choices, and so of their type. */
export function isOneOf<T extends string>(choices: readonly T[], value: string): value is T {
  return (choices as readonly string[]).includes(value);
}

/** A usage error about the arguments (not an unknown option): the message, the usage line and the pointer to --help. */
export function usageError(spec: CommandSpec, message: string): UsageError {
  return new UsageError(
    `${message}\n${usageLine(spec)}\n(portier ${spec.name.replace(/^portier /, "")} --help lists the options)`,
  );
}
