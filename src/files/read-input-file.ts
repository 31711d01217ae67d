/**
 * How Portier reads a file a user names (a bundle, a JWKS, a token, a key, a config or data file): a regular
 * file only, never more bytes than its bound. The file is opened without waiting (O_NONBLOCK: a FIFO with no
 * writer would block the open, and the process with it, signals included), then judged on the open descriptor:
 * a device (/dev/zero never ends), a FIFO, a socket or a folder is refused by name; a symbolic link counts as what
 * it points to (Kubernetes mounts ConfigMaps and Secrets through links). The bound is checked on the file's size,
 * then on the bytes read, since a file may grow between the two. Failures of the system (ENOENT, EACCES) are
 * thrown as they are, for the caller's own words (errors/caught.ts `unreadable`).
 */
import { closeSync, constants, fstatSync, openSync, readSync, statSync, type Stats } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { PortierError } from "../errors/portier-error.js";

const INPUT_FILE_ERROR_CODES = ["file_not_regular", "file_too_large"] as const;

export type InputFileErrorCode = (typeof INPUT_FILE_ERROR_CODES)[number];

/** A named file that is not a regular file, or over its bound: `message` is "FILE: why", `why` the reason alone. */
export class InputFileError extends PortierError {
  static override readonly code = "file_refused";
  static override get codes(): readonly InputFileErrorCode[] {
    return INPUT_FILE_ERROR_CODES;
  }
  declare readonly code: InputFileErrorCode;

  constructor(
    code: InputFileErrorCode,
    readonly file: string,
    readonly why: string,
  ) {
    super(`${file}: ${why}`, { code });
  }
}

const FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

function kindOf(s: Stats): string {
  if (s.isDirectory()) return "a folder";
  if (s.isFIFO()) return "a FIFO";
  if (s.isCharacterDevice()) return "a character device";
  if (s.isBlockDevice()) return "a block device";
  if (s.isSocket()) return "a socket";
  return "not a file";
}

function tooLarge(file: string, maxBytes: number): InputFileError {
  return new InputFileError("file_too_large", file, `larger than ${maxBytes} bytes, the limit`);
}

function regular(file: string, s: Stats): Stats {
  if (!s.isFile()) throw new InputFileError("file_not_regular", file, `not a regular file (${kindOf(s)})`);
  return s;
}

/** The size to start reading with: the file's own, within the bound (one byte more tells a file that grew). */
function judge(file: string, s: Stats, maxBytes: number): number {
  if (regular(file, s).size > maxBytes) throw tooLarge(file, maxBytes);
  return s.size + 1;
}

/** The stats of `file` (a link followed), a regular file, for a caller that opens it later; or InputFileError. */
export function regularFileStats(file: string): Stats {
  return regular(file, statSync(file));
}

/** Opens `file` to read it in the caller's own way (a stream of chunks): a regular file, or InputFileError. */
export async function openInputFile(file: string): Promise<{ handle: FileHandle; stats: Stats }> {
  const handle = await open(file, FLAGS);
  try {
    return { handle, stats: regular(file, await handle.stat()) };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** The bytes read so far, in a buffer grown as reads fill it, never past one byte more than the bound. */
class Collected {
  private buf: Buffer;
  length = 0;

  constructor(
    private readonly file: string,
    private readonly maxBytes: number,
    first: number,
  ) {
    this.buf = Buffer.allocUnsafe(first);
  }

  /** Where the next read goes: the buffer (grown when full) and how many bytes fit from `length`. */
  room(): { buffer: Buffer; free: number } {
    if (this.length === this.buf.length) {
      const bigger = Buffer.allocUnsafe(Math.min(this.buf.length * 2, this.maxBytes + 1));
      this.buf.copy(bigger, 0, 0, this.length);
      this.buf = bigger;
    }
    return { buffer: this.buf, free: this.buf.length - this.length };
  }

  /** Counts `n` bytes read; throws once they pass the bound. */
  add(n: number): void {
    this.length += n;
    if (this.length > this.maxBytes) throw tooLarge(this.file, this.maxBytes);
  }

  bytes(): Buffer {
    return this.buf.subarray(0, this.length);
  }
}

/** The bytes of `file`, a regular file of at most `maxBytes` bytes; throws InputFileError or the system's error. */
export async function readInputFile(file: string, maxBytes: number): Promise<Buffer> {
  const handle = await open(file, FLAGS);
  try {
    const got = new Collected(file, maxBytes, judge(file, await handle.stat(), maxBytes));
    for (;;) {
      const { buffer, free } = got.room();
      const { bytesRead } = await handle.read(buffer, got.length, free, null);
      if (bytesRead === 0) return got.bytes();
      got.add(bytesRead);
    }
  } finally {
    await handle.close();
  }
}

/** readInputFile, synchronously (start-up reads, a token read again before an upload). */
export function readInputFileSync(file: string, maxBytes: number): Buffer {
  const fd = openSync(file, FLAGS);
  try {
    const got = new Collected(file, maxBytes, judge(file, fstatSync(fd), maxBytes));
    for (;;) {
      const { buffer, free } = got.room();
      const n = readSync(fd, buffer, got.length, free, null);
      if (n === 0) return got.bytes();
      got.add(n);
    }
  } finally {
    closeSync(fd);
  }
}
