/**
 * The NDJSON end record, so that no prefix of a feed can pass as complete: the last non-blank line of an
 * NDJSON directory is `{"portier_end":{"records":N,"sha256":"<hex>"}}`, N the record lines before it and
 * the digest that of every byte before its first byte. A JSON array is complete by its own syntax and has none.
 * TailDigest hashes a file's bytes as they stream, without holding them: per chunk it keeps a copy of the
 * hash state taken where the last non-blank line so far begins.
 */
import { createHash, type Hash } from "node:crypto";

export const END_KEY = "portier_end";

export interface EndRecord {
  records: number;
  sha256: string;
}

/** True for a parsed line that is meant as the end record (an object whose one key is portier_end). */
export function isEndRecord(value: unknown): boolean {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length === 1 && keys[0] === END_KEY;
}

/** The end record's content, or a message saying what is wrong with it. */
export function readEndRecord(value: unknown): EndRecord | string {
  const end = typeof value === "object" && value !== null && END_KEY in value ? value[END_KEY] : undefined;
  const shape = 'must be {"portier_end":{"records":<count>,"sha256":"<64 lowercase hex digits>"}}';
  if (typeof end !== "object" || end === null || Array.isArray(end)) return `the end record ${shape}`;
  const unknownField = Object.keys(end).find((k) => k !== "records" && k !== "sha256");
  if (unknownField !== undefined) return `the end record ${shape} (unknown field ${JSON.stringify(unknownField)})`;
  const records = "records" in end ? end.records : undefined;
  const sha256 = "sha256" in end ? end.sha256 : undefined;
  if (typeof records !== "number" || !Number.isSafeInteger(records) || records < 0)
    return `the end record's records ${shape}`;
  if (typeof sha256 !== "string" || !/^[0-9a-f]{64}$/.test(sha256)) return `the end record's sha256 ${shape}`;
  return { records, sha256 };
}

/** The end record line (without newline) for `records` record lines whose bytes hash to `sha256`. */
export function endRecordLine(records: number, sha256: string): string {
  return JSON.stringify({ [END_KEY]: { records, sha256 } });
}

const NEWLINE = 10;
const isSpace = (c: number | undefined) => c === 32 || c === 10 || c === 13 || c === 9;

/** SHA-256 of a stream's bytes before the first non-blank byte of its last non-blank line. */
export class TailDigest {
  private readonly hash: Hash = createHash("sha256");
  /** The hash of the bytes before the last non-blank line's first non-blank byte, when there is one. */
  private atLastLine: Hash | undefined;
  /** Whether the line still open at the end of the bytes so far has a non-blank byte. */
  private lineHasContent = false;

  update(bytes: Uint8Array): void {
    let last = bytes.length - 1;
    while (last >= 0 && isSpace(bytes[last])) last--;
    if (last < 0) {
      // Blank bytes only: they end no line's content, and may close the open line.
      if (bytes.includes(NEWLINE)) this.lineHasContent = false;
      this.hash.update(bytes);
      return;
    }
    const nl = bytes.lastIndexOf(NEWLINE, last);
    // The last non-blank line starts in these bytes unless it began earlier and is still open.
    if (nl >= 0 || !this.lineHasContent) {
      let first = nl + 1;
      while (isSpace(bytes[first])) first++;
      this.hash.update(bytes.subarray(0, first));
      this.atLastLine = this.hash.copy();
      this.hash.update(bytes.subarray(first));
    } else {
      this.hash.update(bytes);
    }
    this.lineHasContent = bytes.lastIndexOf(NEWLINE) < last;
  }

  /** Hex digest of the bytes before the last non-blank line (undefined when every line was blank). */
  beforeLastLine(): string | undefined {
    return this.atLastLine?.digest("hex");
  }
}
