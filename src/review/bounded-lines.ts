/**
 * Reads a text file line by line with a bound on the memory a line may take: a line longer than `maxBytes`
 * is not kept (its bytes are skipped as they stream by) but yielded as a LineTooLong, so its reader counts
 * it instead of holding a whole file that has no newline. Lines end at \n; a \r before it is dropped.
 */
import { createReadStream } from "node:fs";

export class LineTooLong {
  constructor(readonly bytes: number) {}
}

const NEWLINE = 0x0a;

export async function* boundedLines(file: string, maxBytes: number): AsyncGenerator<string | LineTooLong> {
  let parts: Buffer[] = [];
  let size = 0;
  const end = (): string | LineTooLong => {
    const line = size > maxBytes ? new LineTooLong(size) : Buffer.concat(parts).toString("utf8").replace(/\r$/, "");
    parts = [];
    size = 0;
    return line;
  };
  const take = (piece: Buffer) => {
    size += piece.length;
    if (size <= maxBytes) parts.push(piece);
    else parts = [];
  };
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    let from = 0;
    for (let at = chunk.indexOf(NEWLINE); at !== -1; at = chunk.indexOf(NEWLINE, from)) {
      take(chunk.subarray(from, at));
      yield end();
      from = at + 1;
    }
    take(chunk.subarray(from));
  }
  if (size > 0) yield end();
}
