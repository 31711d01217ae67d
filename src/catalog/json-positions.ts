/**
 * Where things are in a JSON text, which JSON.parse does not say in a form to rely on (V8's messages differ by
 * version, and some name no position at all): a strict RFC 8259 scan that gives the line and column of the first
 * syntax error in a few words, and the line of each value by its field path ("routes[3].allowed[1]"), so a data
 * error points at the entry a person edits.
 */

export interface TextPosition {
  /** 1-based. */
  line: number;
  /** 1-based, in UTF-16 code units. */
  column: number;
}

/** The first syntax error of a JSON text. */
export interface JsonSyntaxProblem extends TextPosition {
  problem: string;
}

/** Where the scan stopped, and why: thrown and caught inside this module only (the scan's way out). */
class Stop {
  constructor(
    readonly offset: number,
    readonly problem: string,
  ) {}
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const WHITE = /[ \t\n\r]*/y;

/** Scans a JSON text: the start offset of each value by its path, or a Stop at the first syntax error. */
class Scan {
  private at = 0;
  readonly starts = new Map<string, number>();

  constructor(private readonly text: string) {}

  run(): void {
    this.value("");
    this.space();
    if (this.at < this.text.length) this.fail("after the end of the document");
  }

  private space(): void {
    WHITE.lastIndex = this.at;
    WHITE.exec(this.text);
    this.at = WHITE.lastIndex;
  }

  private fail(what: string): never {
    const c = this.text[this.at];
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- the scan's way out, caught in this module
    throw new Stop(
      this.at,
      c === undefined ? `the text ends early (${what})` : `unexpected ${JSON.stringify(c)} ${what}`,
    );
  }

  private value(path: string): void {
    this.space();
    this.starts.set(path, this.at);
    const c = this.text[this.at];
    if (c === "{") return this.object(path);
    if (c === "[") return this.array(path);
    if (c === '"') return this.string();
    for (const word of ["true", "false", "null"])
      if (this.text.startsWith(word, this.at)) {
        this.at += word.length;
        return;
      }
    NUMBER.lastIndex = this.at;
    if (c !== undefined && NUMBER.test(this.text)) {
      this.at = NUMBER.lastIndex;
      return;
    }
    this.fail("where a value was expected");
  }

  private object(path: string): void {
    this.at++;
    this.space();
    if (this.text[this.at] === "}") {
      this.at++;
      return;
    }
    for (;;) {
      this.space();
      if (this.text[this.at] !== '"') this.fail("where a field name in double quotes was expected");
      const start = this.at;
      this.string();
      const name = JSON.parse(this.text.slice(start, this.at)) as string;
      this.space();
      if (this.text[this.at] !== ":") this.fail("where ':' was expected after a field name");
      this.at++;
      this.value(path ? `${path}.${name}` : name);
      this.space();
      const c = this.text[this.at];
      this.at++;
      if (c === "}") return;
      if (c !== ",") {
        this.at--;
        this.fail("where ',' or '}' was expected");
      }
    }
  }

  private array(path: string): void {
    this.at++;
    this.space();
    if (this.text[this.at] === "]") {
      this.at++;
      return;
    }
    for (let i = 0; ; i++) {
      this.value(`${path}[${i}]`);
      this.space();
      const c = this.text[this.at];
      this.at++;
      if (c === "]") return;
      if (c !== ",") {
        this.at--;
        this.fail("where ',' or ']' was expected");
      }
    }
  }

  private string(): void {
    this.at++;
    for (;;) {
      const c = this.text[this.at];
      if (c === undefined) this.fail("inside a string");
      if (c === '"') {
        this.at++;
        return;
      }
      if (c < " ") this.fail("inside a string (a control character must be escaped)");
      if (c === "\\") {
        const e = this.text[this.at + 1];
        if (e === "u" && /^[0-9a-fA-F]{4}$/.test(this.text.slice(this.at + 2, this.at + 6))) this.at += 6;
        else if (e !== undefined && '"\\/bfnrt'.includes(e)) this.at += 2;
        else {
          this.at++;
          this.fail("after '\\' in a string");
        }
      } else this.at++;
    }
  }
}

/** Line and column (1-based) of a character offset. */
export function positionOf(text: string, offset: number): TextPosition {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  return { line, column: offset - before.lastIndexOf("\n") };
}

/** The first syntax error of `text`, or undefined when it is valid JSON. */
export function jsonSyntaxProblem(text: string): JsonSyntaxProblem | undefined {
  try {
    new Scan(text).run();
    return undefined;
  } catch (err) {
    if (!(err instanceof Stop)) throw err;
    return { ...positionOf(text, err.offset), problem: err.problem };
  }
}

/** The line (1-based) of each value of a valid JSON text, by field path ("" is the document). */
export function jsonValueLines(text: string): Map<string, number> {
  const scan = new Scan(text);
  try {
    scan.run();
  } catch (err) {
    if (!(err instanceof Stop)) throw err;
  }
  return new Map([...scan.starts].map(([path, offset]) => [path, positionOf(text, offset).line]));
}
