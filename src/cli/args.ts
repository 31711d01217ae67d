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
import { exitCodesHelp, type ExitMeanings } from "./exit-codes.js";

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
  /** Extra lines after the options (environment variables, signals). */
  notes?: string;
  /** What exit codes 0 and 1 mean for this command (exit-codes.ts); rendered last in --help. */
  exits: ExitMeanings;
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
  description: "the policy project: a folder holding data/ (and its tests in policies/, its serve config portier.json)",
  default: "the current folder when it holds data/routes.json, else Portier's own (the spec's project)",
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
    const repeatable = o.multiple ? " (repeatable)" : "";
    const text = `${o.description}${repeatable}${o.default !== undefined ? ` (default: ${o.default})` : ""}`;
    return flag.length > width ? `  ${flag}\n  ${" ".repeat(width)}  ${text}` : `  ${flag.padEnd(width)}  ${text}`;
  });
  return [
    usageLine(spec),
    "",
    spec.summary,
    "",
    "options:",
    ...lines,
    ...(spec.notes ? ["", spec.notes] : []),
    "",
    exitCodesHelp(spec.exits),
  ].join("\n");
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
    throw usageError(spec, argumentProblem(err, argv, options));
  }
}

/**
 * What parseArgs refused, in our words, one line: found again in its tokens (the options as parsed without
 * strictness), not read from its message. The option named, with the nearest known one for an unknown option.
 */
function argumentProblem(err: unknown, argv: string[], options: ParseOptions): string {
  const { tokens } = parseArgs({ args: argv, options, allowPositionals: true, strict: false, tokens: true });
  for (const t of tokens) {
    if (t.kind !== "option") continue;
    const o = options[t.name];
    if (o === undefined) {
      const flags = Object.keys(options).map((name) => `--${name}`);
      return `unknown option ${t.rawName}${didYouMean(t.rawName, flags, (s) => s)}`;
    }
    if (o.type === "boolean" && t.value !== undefined) return `${t.rawName} takes no value`;
    // A string option without a value, or whose value was taken from the next argument that looks like an option.
    if (o.type === "string" && (t.value === undefined || (!t.inlineValue && t.value.startsWith("-"))))
      return `${t.rawName} needs a value`;
  }
  return messageOf(err);
}

/** Whether a value given on the command line is one of the choices, and so of their type. */
export function isOneOf<T extends string>(choices: readonly T[], value: string): value is T {
  return (choices as readonly string[]).includes(value);
}

/** A usage error, one line: the problem and where the options are listed. */
export function usageError(spec: CommandSpec, message: string): UsageError {
  return new UsageError(`${message}; ${spec.name} --help lists the options`);
}

/** --min-coverage of `portier test` and `portier review`: a percentage from 0 to 100, default 100. */
export function minCoverageOption(spec: CommandSpec, raw: string | undefined): number {
  if (raw === undefined) return 100;
  const value = /^\d+(\.\d+)?$/.test(raw.trim()) ? Number(raw) : NaN;
  if (!(value >= 0 && value <= 100))
    throw usageError(spec, `--min-coverage: "${raw}" is not a percentage from 0 to 100`);
  return value;
}
