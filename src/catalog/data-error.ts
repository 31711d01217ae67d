/**
 * The error every data problem becomes: it names the file and where in it (its line, and a field path or a
 * column), `file:line: field: problem`, so an editor and a CI annotation open the entry; a file that cannot be
 * read at all says so in its own words (`message`, e.g. "not found: data/roles.json").
 */
import { PortierError } from "../errors/portier-error.js";

export interface DataErrorOptions {
  message?: string;
  /** 1-based line of the entry (or of a syntax error). */
  line?: number;
  /** 1-based column of a syntax error. */
  column?: number;
}

export class DataError extends PortierError {
  static override readonly code = "data_invalid";
  readonly line: number | undefined;
  readonly column: number | undefined;

  constructor(
    readonly file: string,
    readonly where: string,
    readonly problem: string,
    opts: DataErrorOptions = {},
  ) {
    const at = opts.line ? `:${opts.line}${opts.column ? `:${opts.column}` : ""}` : "";
    super(opts.message ?? `${file}${at}${where ? `: ${where}` : ""}: ${problem}`);
    this.line = opts.line;
    this.column = opts.column;
  }
}
