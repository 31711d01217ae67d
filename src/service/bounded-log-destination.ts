/**
 * The service log's destination (pino writes each line here): sonic-boom, the writer pino.destination()
 * builds, batching lines (one write once `minWriteBytes` wait, and at least every `flushIntervalMs`) to a
 * file descriptor, stdout, without blocking. Its `maxLength` caps the bytes waiting: when stdout is not
 * drained, a line that would pass the cap is dropped whole (sonic-boom's `drop` event) and counted here
 * (portier_log_lines_dropped_total) instead of growing memory without limit; writing resumes by itself when
 * the reader catches up (sonic-boom retries EAGAIN every 100 ms).
 *
 * What this wrapper adds: the counts (dropped lines, bytes waiting: portier_log_buffer_bytes), and the
 * failures sonic-boom leaves to its user. A descriptor that refuses a write for good (EPIPE: nobody reads any
 * more) is given up: the lines waiting and every later line are counted as dropped, never thrown. On exit,
 * flushSync writes what it can without waiting for a full pipe. The destination owns the descriptor: end()
 * closes it, except stdout and stderr (sonic-boom's rule).
 *
 * sonic-boom runs in its `contentMode: "buffer"`: each line is encoded once, here (its byte count is then the
 * Buffer's length), and sonic-boom keeps a list of Buffers per write. In its default string mode it appends each
 * line to one growing string and measures that string's UTF-8 length again on every line, and encodes each
 * write twice (for the write, then to find what was written): over HTTP the buffer mode measured 0.98x the
 * CPU per request of the string mode.
 *
 * The descriptor should be non-blocking when it is a pipe or socket (start-service opens process.stdout
 * first, which makes it so): a full pipe then answers EAGAIN and is retried from a timer, where a blocking
 * write would hold a thread-pool thread, and the process, until somebody reads.
 */
import sonicBoom from "sonic-boom";

// sonic-boom is CommonJS; its default export carries the class under its own name.
const { SonicBoom } = sonicBoom;

// sonic-boom's README documents `write(Buffer)` in `contentMode: "buffer"`; its typings declare write(string) only.
declare module "sonic-boom" {
  interface SonicBoom {
    write(data: Buffer): boolean;
  }
}

export interface BoundedLogDestinationOptions {
  /** File descriptor to write to (1: stdout). */
  fd: number;
  /** Cap on the bytes waiting: queued plus the write in progress. */
  maxBufferBytes: number;
  /** Lines are written once this many bytes wait (default 4096), else by the timer or flush(). */
  minWriteBytes?: number;
  /** At most this long between a line and its write (default 200 ms). */
  flushIntervalMs?: number;
}

function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) n++;
  return Math.max(n, 1);
}

export class BoundedLogDestination {
  private readonly sonic: InstanceType<typeof SonicBoom>;
  /** What waits, in the order it was accepted: bytes and lines of each write (a write may hold several lines). */
  private waitingBytes: number[] = [];
  private waitingLines: number[] = [];
  private head = 0;
  /** Bytes of the oldest waiting write already written. */
  private headWritten = 0;
  private waiting = 0;
  private dropped = 0;
  private lineDropped = false;
  /** The descriptor refused a write (not EAGAIN), or end() finished: nothing more is written. */
  private closed = false;
  /** flushSync on exit: a full pipe fails at once instead of being retried. */
  private exiting = false;

  constructor(options: BoundedLogDestinationOptions) {
    this.sonic = new SonicBoom({
      fd: options.fd,
      minLength: options.minWriteBytes ?? 4096,
      maxLength: options.maxBufferBytes,
      periodicFlush: options.flushIntervalMs ?? 200,
      sync: false,
      contentMode: "buffer",
      retryEAGAIN: () => !this.exiting,
    });
    this.sonic.on("drop", (data: Buffer) => {
      this.lineDropped = true;
      this.dropped += countLines(String(data));
    });
    this.sonic.on("write", (n: number) => this.written(n));
    this.sonic.on("error", () => this.giveUp());
  }

  /** Bytes waiting for the descriptor: never more than maxBufferBytes. */
  get bufferedBytes(): number {
    return this.waiting;
  }

  /** Lines dropped because the buffer was full or the descriptor refused them (EPIPE). */
  get droppedLines(): number {
    return this.dropped;
  }

  /** pino's stream interface: one call per log line. */
  write(line: string): boolean {
    if (this.closed) {
      this.dropped += countLines(line);
      return true;
    }
    this.lineDropped = false;
    const data = Buffer.from(line);
    const bytes = data.length;
    // Accepted unless sonic-boom emits `drop` (synchronously, from write).
    this.waiting += bytes;
    this.waitingBytes.push(bytes);
    this.waitingLines.push(0);
    this.sonic.write(data);
    if (this.lineDropped) {
      this.waiting -= bytes;
      this.waitingBytes.pop();
      this.waitingLines.pop();
    } else {
      this.waitingLines[this.waitingLines.length - 1] = countLines(line);
    }
    return true;
  }

  /** Writes what waits now; `done` is called once everything buffered is written (or given up). */
  flush(done?: (err?: Error) => void): void {
    if (this.closed || this.waiting === 0) {
      done?.();
      return;
    }
    // sonic-boom calls back once the bytes waiting are down to minLength: flush again until none wait.
    this.sonic.flush(() => (done ? this.flush(done) : undefined));
  }

  /** Waits up to `timeoutMs` for the buffer to drain, then closes; false if lines are left. */
  end(timeoutMs: number): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const giveUp = setTimeout(() => resolve(false), timeoutMs);
      giveUp.unref();
      this.flush(() => {
        clearTimeout(giveUp);
        const drained = this.waiting === 0;
        if (!this.closed) {
          this.closed = true;
          this.sonic.once("close", () => resolve(drained));
          this.sonic.end();
        } else resolve(drained);
      });
    });
  }

  /** On process exit: writes what waits synchronously, as far as the descriptor takes it; the rest is dropped. */
  flushSync(): void {
    if (this.closed || this.waiting === 0) return;
    this.exiting = true;
    try {
      this.sonic.flushSync();
    } catch {
      this.giveUp();
    }
  }

  private written(n: number): void {
    this.waiting -= n;
    let left = this.headWritten + n;
    while (this.head < this.waitingBytes.length && left >= this.waitingBytes[this.head]!) {
      left -= this.waitingBytes[this.head]!;
      this.head++;
    }
    this.headWritten = left;
    // Compact now and then, so the lists hold only what waits.
    if (this.head > 1024 && this.head * 2 > this.waitingBytes.length) {
      this.waitingBytes = this.waitingBytes.slice(this.head);
      this.waitingLines = this.waitingLines.slice(this.head);
      this.head = 0;
    }
  }

  /** The descriptor refused a write: what waits is lost (counted), and so is every later line. */
  private giveUp(): void {
    if (this.closed && this.waiting === 0) return;
    for (let i = this.head; i < this.waitingLines.length; i++) this.dropped += this.waitingLines[i]!;
    this.waitingBytes = [];
    this.waitingLines = [];
    this.head = 0;
    this.headWritten = 0;
    this.waiting = 0;
    if (!this.closed) {
      this.closed = true;
      // Stops sonic-boom's timer and retries (and closes the descriptor, unless it is stdout or stderr).
      this.sonic.destroy();
    }
  }
}
