/**
 * Reads a JSON file and reports a parse error with the file name, line and column.
 */
import { DataError } from "./data-error.js";
import { messageOf, unreadable } from "../errors/caught.js";
import { InputFileError, readInputFileSync } from "../files/read-input-file.js";

/** The largest catalog file (routes, roles, tenants, their schemas): the spec's are a few KiB. */
const MAX_DATA_FILE_BYTES = 16 * 1024 * 1024;

/** Line and column (1-based) of a character offset. */
function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - before.lastIndexOf("\n");
  return { line, column };
}

function parseJsonText(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const message = messageOf(err);
    // V8 names no position for a text that ends too early: the end is where it is missing.
    const at =
      /position (\d+)/.exec(message)?.[1] ?? (/Unexpected end of JSON input/.test(message) ? text.length : null);
    if (at !== null) {
      const { line, column } = lineAndColumn(text, Number(at));
      throw new DataError(
        file,
        `${line}:${column}`,
        `invalid JSON: ${message.replace(/ in JSON at position \d+.*$/, "")}`,
      );
    }
    throw new DataError(file, "", `invalid JSON: ${message}`);
  }
}

export function readJsonFile(file: string): unknown {
  let text: string;
  try {
    text = readInputFileSync(file, MAX_DATA_FILE_BYTES).toString("utf8");
  } catch (err) {
    if (err instanceof InputFileError) throw new DataError(file, "", err.why);
    throw new DataError(file, "", "cannot read", unreadable(file, err));
  }
  return parseJsonText(text, file);
}
