/**
 * Splits a directory file, fed as text chunks of any size, into records: NDJSON line by line, or the
 * elements of a top-level JSON array found by a small scanner (strings, escapes, nesting) and each parsed
 * with JSON.parse. Never holds more than one unfinished record beyond the current chunk. Malformed JSON
 * throws with the file, line and column of the fault and what is wrong there, both found by scanning the record
 * (json-fault.ts), never read from JSON.parse's message; every record and line is bounded in length, and the
 * record count.
 * An NDJSON end record (end-record.ts) is kept apart, not handed on as a record; a line after it throws.
 */
import { messageOf } from "../errors/caught.js";
import { PortierError } from "../errors/portier-error.js";
import { isEndRecord, readEndRecord, type EndRecord } from "./end-record.js";
import { jsonFault, type JsonFault } from "./json-fault.js";

export interface RecordLimits {
  /** Longest NDJSON line or JSON array element, in characters. */
  maxRecordChars: number;
  /** Most records (lines or array elements) in one file. */
  maxRecords: number;
}

/** `where` is `line N` (NDJSON) or `record i` (JSON array, from 0), as problems are reported. */
export type RecordHandler = (value: unknown, where: string) => void;

export class RecordSyntaxError extends PortierError {
  static override readonly code = "record_syntax_invalid";
}

const enum State {
  Detect,
  ArrayFirst, // after '[': an element or ']'
  ArrayNext, // after ',': an element
  ArrayValue, // inside an element
  AfterArray,
  Ndjson,
}

const NEWLINE = 10;
const QUOTE = 34;
const BACKSLASH = 92;

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

export class RecordStream {
  private buf = "";
  /** Absolute character offset of buf[0] in the file. */
  private base = 0;
  /** Where scanning resumes in buf. */
  private pos = 0;
  private state = State.Detect;
  /** Line (from 1) at `pos`, and the absolute offset where that line starts. */
  private line = 1;
  private lineStart = 0;
  // The element being scanned.
  private elemStart = -1;
  private elemLine = 1;
  private elemLineStart = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;
  private records = 0;
  private endRecord: (EndRecord & { line: number }) | undefined;

  constructor(
    private readonly source: string,
    private readonly limits: RecordLimits,
    private readonly onRecord: RecordHandler,
  ) {}

  feed(chunk: string): void {
    if (this.pos === 0 && this.base === 0 && this.buf === "" && chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
    this.buf = this.buf.length === 0 ? chunk : this.buf + chunk;
    if (this.state === State.Ndjson) this.lines(false);
    else this.scan();
  }

  /** Whether the text is NDJSON (an empty or blank text included) rather than a JSON array; known after end(). */
  get isNdjson(): boolean {
    return this.state === State.Ndjson;
  }

  /** Records handed on (the NDJSON end record is not one). */
  get recordCount(): number {
    return this.records;
  }

  /** The NDJSON end record, when the text had one (as its last non-blank line: a line after it throws). */
  get endRecordFound(): (EndRecord & { line: number }) | undefined {
    return this.endRecord;
  }

  /** Call once after the last chunk. */
  end(): void {
    if (this.state === State.Ndjson || this.state === State.Detect) {
      this.state = State.Ndjson;
      this.lines(true);
    } else if (this.state !== State.AfterArray) {
      throw this.error(this.base + this.buf.length, "unexpected end of file: the JSON array is not closed");
    }
  }

  private error(at: number, what: string, line = this.line, lineStart = this.lineStart): RecordSyntaxError {
    return new RecordSyntaxError(`${this.source}:${line}:${at - lineStart + 1}: ${what}`);
  }

  private count(): void {
    if (++this.records > this.limits.maxRecords)
      throw new RecordSyntaxError(`${this.source}: more than ${this.limits.maxRecords} records (the limit)`);
  }

  private lines(last: boolean): void {
    const s = this.buf;
    let start = this.pos;
    for (;;) {
      let nl = s.indexOf("\n", start);
      if (nl < 0) {
        if (!last) break;
        if (start >= s.length) break;
        nl = s.length;
      }
      this.line1(s, start, nl);
      start = nl + 1;
      this.line++;
    }
    this.buf = start >= s.length ? "" : s.slice(start);
    this.base += Math.min(start, s.length);
    this.pos = 0;
    if (this.buf.length > this.limits.maxRecordChars)
      throw new RecordSyntaxError(
        `${this.source}:${this.line}: line longer than ${this.limits.maxRecordChars} characters (the limit)`,
      );
  }

  private line1(s: string, start: number, end: number): void {
    if (end - start > this.limits.maxRecordChars)
      throw new RecordSyntaxError(
        `${this.source}:${this.line}: line longer than ${this.limits.maxRecordChars} characters (the limit)`,
      );
    let from = start;
    while (from < end && isSpace(s.charCodeAt(from))) from++;
    if (from === end) return;
    const text = s.slice(from, end);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      const { offset, why } = faultOf(text, err);
      throw new RecordSyntaxError(`${this.source}:${this.line}:${from - start + offset + 1}: ${why}`);
    }
    if (this.endRecord)
      throw new RecordSyntaxError(
        `${this.source}:${this.line}: content after the end record of line ${this.endRecord.line} ` +
          "(nothing may follow it)",
      );
    if (isEndRecord(value)) {
      const end = readEndRecord(value);
      if (typeof end === "string") throw new RecordSyntaxError(`${this.source}:${this.line}: ${end}`);
      this.endRecord = { ...end, line: this.line };
      return;
    }
    this.count();
    this.onRecord(value, `line ${this.line}`);
  }

  private scan(): void {
    const s = this.buf;
    let i = this.pos;
    const n = s.length;
    while (i < n) {
      const c = s.charCodeAt(i);
      switch (this.state) {
        case State.Detect:
          if (isSpace(c)) break;
          if (c !== 91 /* [ */) {
            // Not a JSON array: NDJSON, from the start of this line (the lines before were blank).
            this.state = State.Ndjson;
            this.pos = Math.max(0, this.lineStart - this.base);
            this.lines(false);
            return;
          }
          this.state = State.ArrayFirst;
          break;
        case State.ArrayFirst:
        case State.ArrayNext:
          if (isSpace(c)) break;
          if (c === 93 /* ] */) {
            if (this.state === State.ArrayNext) throw this.error(this.base + i, "a value is expected after ','");
            this.state = State.AfterArray;
            break;
          }
          if (c === 44 /* , */) throw this.error(this.base + i, "a value is expected before ','");
          this.state = State.ArrayValue;
          this.elemStart = i;
          this.elemLine = this.line;
          this.elemLineStart = this.lineStart;
          this.depth = 0;
          this.inString = false;
          this.escaped = false;
          continue; // look at this character again as part of the element
        case State.ArrayValue:
          if (this.inString) {
            if (this.escaped) this.escaped = false;
            else if (c === BACKSLASH) this.escaped = true;
            else if (c === QUOTE) this.inString = false;
          } else if (c === QUOTE) {
            this.inString = true;
          } else if (c === 123 /* { */ || c === 91 /* [ */) {
            this.depth++;
          } else if (c === 125 /* } */ || c === 93 /* ] */) {
            if (this.depth > 0) this.depth--;
            else if (c === 93) {
              this.element(s, i);
              this.state = State.AfterArray;
            } else throw this.error(this.base + i, "unexpected '}'");
          } else if (c === 44 /* , */ && this.depth === 0) {
            this.element(s, i);
            this.state = State.ArrayNext;
          }
          break;
        case State.AfterArray:
          if (!isSpace(c)) throw this.error(this.base + i, "unexpected content after the JSON array");
          break;
        default:
          break;
      }
      if (c === NEWLINE) {
        this.line++;
        this.lineStart = this.base + i + 1;
      }
      i++;
    }
    // Keep only the unfinished element.
    const keep = this.state === State.ArrayValue ? this.elemStart : n;
    this.buf = keep >= n ? "" : s.slice(keep);
    this.base += keep;
    this.pos = n - keep;
    if (this.state === State.ArrayValue) {
      this.elemStart = 0;
      if (this.buf.length > this.limits.maxRecordChars) {
        throw this.error(
          this.base,
          `record ${this.records} is longer than ${this.limits.maxRecordChars} characters (the limit)`,
          this.elemLine,
          this.elemLineStart,
        );
      }
    }
  }

  /** The element s[elemStart, end) is complete. */
  private element(s: string, end: number): void {
    if (end - this.elemStart > this.limits.maxRecordChars) {
      throw this.error(
        this.base + this.elemStart,
        `record ${this.records} is longer than ${this.limits.maxRecordChars} characters (the limit)`,
        this.elemLine,
        this.elemLineStart,
      );
    }
    const text = s.slice(this.elemStart, end);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      // Position of the fault: the line and column inside the file, from where the record's scan stops.
      const { offset: at, why } = faultOf(text, err);
      let line = this.elemLine;
      let lineStart = this.elemLineStart;
      for (let k = 0; k < at; k++) {
        if (text.charCodeAt(k) === NEWLINE) {
          line++;
          lineStart = this.base + this.elemStart + k + 1;
        }
      }
      throw this.error(this.base + this.elemStart + at, `record ${this.records}: ${why}`, line, lineStart);
    }
    const index = this.records;
    this.count();
    this.onRecord(value, `record ${index}`);
  }
}

/** Where and why a record JSON.parse refused is malformed, from the scan (json-fault.ts), never from its message. */
function faultOf(text: string, err: unknown): JsonFault {
  // The scan finds a fault in every text JSON.parse refuses; were it ever not to, the record's start and the error.
  return jsonFault(text) ?? { offset: 0, why: messageOf(err) };
}
