/**
 * Reads a JSON file; a syntax error is reported in one line with the file, line and column (from our own scan,
 * json-positions.ts, not V8's message, which names no position for most errors and quotes the text across lines);
 * dataErrorAt gives a field's problem the line of its entry.
 */
import { DataError } from "./data-error.js";
import { unreadable } from "../errors/caught.js";
import { InputFileError, readInputFileSync } from "../files/read-input-file.js";
import { jsonSyntaxProblem, jsonValueLines } from "./json-positions.js";

/** The largest catalog file (routes, roles, tenants, their schemas): the spec's are a few KiB. */
const MAX_DATA_FILE_BYTES = 16 * 1024 * 1024;

function readText(file: string): string {
  try {
    return readInputFileSync(file, MAX_DATA_FILE_BYTES).toString("utf8");
  } catch (err) {
    if (err instanceof InputFileError) throw new DataError(file, "", err.why);
    throw new DataError(file, "", "cannot read", { message: unreadable(file, err) });
  }
}

export function readJsonFile(file: string): unknown {
  const text = readText(file);
  try {
    return JSON.parse(text);
  } catch {
    const p = jsonSyntaxProblem(text);
    // JSON.parse and the scan agree on what is JSON; should they not, the error still names the file.
    throw new DataError(file, "", `invalid JSON: ${p?.problem ?? "not a JSON document"}`, {
      ...(p ? { line: p.line, column: p.column } : {}),
    });
  }
}

/**
 * A DataError at the entry `where` names ("routes[3].template"): the line of that value in the file, else of the
 * nearest enclosing one ("routes[3]"). A file that cannot be read again gets no line.
 */
export function dataErrorAt(file: string, where: string, problem: string): DataError {
  let lines: Map<string, number>;
  try {
    lines = jsonValueLines(readText(file));
  } catch {
    return new DataError(file, where, problem);
  }
  for (let path = where; ; path = path.replace(/(\.[^.[\]]+|\[\d+\])$/, "")) {
    const line = lines.get(path);
    if (line !== undefined && path !== "") return new DataError(file, where, problem, { line });
    if (path === "" || !/(\.[^.[\]]+|\[\d+\])$/.test(path)) return new DataError(file, where, problem);
  }
}
