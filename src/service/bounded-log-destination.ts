/**
 * The service log's destination (pino writes each line here): lines are batched (one write once 4 KiB
 * wait, and at least every 200 ms) and written to a file descriptor, stdout, one write at a time. The bytes
 * waiting are capped: when stdout is not drained, a line that would pass the cap is dropped whole and
 * counted (portier_log_lines_dropped_total) instead of growing memory without limit; writing resumes by
 * itself when the reader catches up.
 *
 * The descriptor should be non-blocking when it is a pipe or socket (start-service opens process.stdout
 * first, which makes it so): a full pipe then answers EAGAIN and is retried from an unref'd timer, where a
 * blocking write would hold a thread-pool thread, and the process, until somebody reads.
 */
import { write, writeSync } from "node:fs";

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

const RETRY_MS = 100;

function countLines(text: string | Buffer): number {
  let n = 0;
  if (typeof text === "string") for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) n++;
  else for (let i = text.indexOf(10); i >= 0; i = text.indexOf(10, i + 1)) n++;
  return Math.max(n, 1);
}

export class BoundedLogDestination {
  private readonly fd: number;
  private readonly maxBufferBytes: number;
  private readonly minWriteBytes: number;
  private readonly timer: NodeJS.Timeout;
  private queue: string[] = [];
  private queuedBytes = 0;
  private inFlightBytes = 0;
  private writing = false;
  private dropped = 0;
  private drainWaiters: Array<() => void> = [];

  constructor(options: BoundedLogDestinationOptions) {
    this.fd = options.fd;
    this.maxBufferBytes = options.maxBufferBytes;
    this.minWriteBytes = options.minWriteBytes ?? 4096;
    this.timer = setInterval(() => this.startWrite(), options.flushIntervalMs ?? 200);
    this.timer.unref();
  }

  /** Bytes waiting for the descriptor: never more than maxBufferBytes. */
  get bufferedBytes(): number {
    return this.queuedBytes + this.inFlightBytes;
  }

  /** Lines dropped because the buffer was full or the descriptor refused them (EPIPE). */
  get droppedLines(): number {
    return this.dropped;
  }

  /** pino's stream interface: one call per log line. */
  write(line: string): boolean {
    const bytes = Buffer.byteLength(line);
    if (this.bufferedBytes + bytes > this.maxBufferBytes) {
      this.dropped += countLines(line);
      return true;
    }
    this.queue.push(line);
    this.queuedBytes += bytes;
    if (this.queuedBytes >= this.minWriteBytes) this.startWrite();
    return true;
  }

  /** Writes what waits now; `done` is called once everything buffered is written. */
  flush(done?: (err?: Error) => void): void {
    if (done) {
      if (this.bufferedBytes === 0) return done();
      this.drainWaiters.push(() => done());
    }
    this.startWrite();
  }

  /** Stops the timer and waits up to `timeoutMs` for the buffer to drain; false if lines are left. */
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

  /**
   * On process exit: writes the queued lines synchronously, unless a write is still in progress (the
   * descriptor is full, and the lines after it must not overtake it). A full descriptor drops the rest.
   */
  flushSync(): void {
    if (this.writing || this.queuedBytes === 0) return;
    const buf = Buffer.from(this.queue.join(""));
    this.queue = [];
    this.queuedBytes = 0;
    let offset = 0;
    try {
      while (offset < buf.length) offset += writeSync(this.fd, buf, offset);
    } catch {
      this.dropped += countLines(buf.subarray(offset));
    }
  }

  private startWrite(): void {
    if (this.writing || this.queuedBytes === 0) return;
    const buf = Buffer.from(this.queue.join(""));
    this.queue = [];
    this.queuedBytes = 0;
    this.writing = true;
    this.writeOut(buf);
  }

  private writeOut(buf: Buffer): void {
    this.inFlightBytes = buf.length;
    write(this.fd, buf, 0, buf.length, null, (err, written) => {
      if (err) {
        // Full: try again later. The bytes keep counting against the cap meanwhile.
        if ((err as NodeJS.ErrnoException).code === "EAGAIN") {
          setTimeout(() => this.writeOut(buf), RETRY_MS).unref();
          return;
        }
        // Anything else (EPIPE: nobody reads any more): these lines are lost; count them, never throw.
        this.dropped += countLines(buf);
        written = buf.length;
      }
      if (written < buf.length) return this.writeOut(buf.subarray(written));
      this.inFlightBytes = 0;
      this.writing = false;
      if (this.queuedBytes >= this.minWriteBytes || (this.queuedBytes > 0 && this.drainWaiters.length > 0)) return this.startWrite();
      if (this.queuedBytes === 0 && this.drainWaiters.length > 0) {
        const waiters = this.drainWaiters;
        this.drainWaiters = [];
        for (const w of waiters) w();
      }
    });
  }
}
