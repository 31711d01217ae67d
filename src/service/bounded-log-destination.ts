/**
 * The service log's destination (pino writes each line here): lines are batched (one write once 4 KiB
 * wait, and at least every 200 ms) into a stream, stdout by default. The bytes not yet taken by the reader
 * are capped: when stdout is not drained, a line that would pass the cap is dropped whole and counted
 * (portier_log_lines_dropped_total) instead of growing memory without limit; writing resumes by itself
 * when the reader catches up. process.stdout on a pipe or socket writes without blocking and does not
 * hold the process open at exit, so a stuck reader can neither stall decisions nor stop a shutdown.
 */

/** What the destination needs of its stream (process.stdout, or a test's Writable). */
export interface LogStream {
  write(chunk: string, callback?: (err?: Error | null) => void): boolean;
  readonly writableLength: number;
  on(event: "error", listener: (err: Error) => void): unknown;
}

export interface BoundedLogDestinationOptions {
  /** Cap on the bytes waiting: queued here plus accepted by the stream but not yet written. */
  maxBufferBytes: number;
  /** Default process.stdout. */
  stream?: LogStream;
  /** Lines are handed to the stream once this many bytes wait (default 4096), else by the timer or flush(). */
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
  private readonly stream: LogStream;
  private readonly maxBufferBytes: number;
  private readonly minWriteBytes: number;
  private readonly timer: NodeJS.Timeout;
  private queue: string[] = [];
  private queuedBytes = 0;
  private pendingWrites = 0;
  private dropped = 0;
  private failed = false;
  private drainWaiters: Array<() => void> = [];

  constructor(options: BoundedLogDestinationOptions) {
    this.stream = options.stream ?? process.stdout;
    this.maxBufferBytes = options.maxBufferBytes;
    this.minWriteBytes = options.minWriteBytes ?? 4096;
    // A reader that goes away (EPIPE) must not take the service down: count what is lost from then on.
    this.stream.on("error", () => {
      this.failed = true;
      this.dropped += this.queue.reduce((n, line) => n + countLines(line), 0);
      this.queue = [];
      this.queuedBytes = 0;
    });
    this.timer = setInterval(() => this.writeQueued(), options.flushIntervalMs ?? 200);
    this.timer.unref();
  }

  /** Bytes waiting for the reader: never more than maxBufferBytes. */
  get bufferedBytes(): number {
    return this.queuedBytes + this.stream.writableLength;
  }

  /** Lines dropped because the buffer was full or the stream failed. */
  get droppedLines(): number {
    return this.dropped;
  }

  /** pino's stream interface: one call per log line. */
  write(line: string): boolean {
    const bytes = Buffer.byteLength(line);
    if (this.failed || this.bufferedBytes + bytes > this.maxBufferBytes) {
      this.dropped += countLines(line);
      return true;
    }
    this.queue.push(line);
    this.queuedBytes += bytes;
    if (this.queuedBytes >= this.minWriteBytes) this.writeQueued();
    return true;
  }

  /** Hands what waits to the stream; `done` is called once the stream has written all of it. */
  flush(done?: (err?: Error) => void): void {
    this.writeQueued();
    if (!done) return;
    if (this.pendingWrites === 0) done();
    else this.drainWaiters.push(() => done());
  }

  /** Stops the timer and waits up to `timeoutMs` for the reader; false if lines are still waiting. */
  end(timeoutMs: number): Promise<boolean> {
    clearInterval(this.timer);
    return new Promise<boolean>((resolve) => {
      const giveUp = setTimeout(() => resolve(false), timeoutMs);
      giveUp.unref();
      this.flush(() => {
        clearTimeout(giveUp);
        resolve(true);
      });
    });
  }

  private writeQueued(): void {
    if (this.queuedBytes === 0 || this.failed) return;
    const chunk = this.queue.join("");
    this.queue = [];
    this.queuedBytes = 0;
    this.pendingWrites++;
    this.stream.write(chunk, () => {
      if (--this.pendingWrites > 0) return;
      const waiters = this.drainWaiters;
      this.drainWaiters = [];
      for (const w of waiters) w();
    });
  }
}
