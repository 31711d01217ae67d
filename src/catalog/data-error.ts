/**
 * The error every data problem becomes: it names the file and where in it (a field path or line:col).
 */
import { PortierError } from "../errors/portier-error.js";

export class DataError extends PortierError {
  static override readonly code = "data_invalid";

  constructor(
    readonly file: string,
    readonly where: string,
    readonly problem: string,
  ) {
    super(`${file}${where ? `: ${where}` : ""}: ${problem}`);
  }
}
