/**
 * The error every data problem becomes: it names the file and where in it (a field path or line:col); a file
 * that cannot be read at all says so in its own words (`message`, e.g. "not found: data/roles.json").
 */
import { PortierError } from "../errors/portier-error.js";

export class DataError extends PortierError {
  static override readonly code = "data_invalid";

  constructor(
    readonly file: string,
    readonly where: string,
    readonly problem: string,
    message = `${file}${where ? `: ${where}` : ""}: ${problem}`,
  ) {
    super(message);
  }
}
