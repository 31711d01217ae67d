/**
 * The error every data problem becomes: it names the file and where in it (a field path or line:col).
 */
export class DataError extends Error {
  readonly code = "data_invalid";

  constructor(
    readonly file: string,
    readonly where: string,
    readonly problem: string,
  ) {
    super(`${file}${where ? `: ${where}` : ""}: ${problem}`);
    this.name = "DataError";
  }
}
