/**
 * Ships encoded decision log events to the collector, nothing accepted lost by Portier's fault short of a full
 * buffer or the end of the stop. Events wait in one bounded buffer (bytes of their JSON: the queue plus the
 * batches not yet delivered); when it is full the oldest event not on the wire is dropped, counted
 * (buffer_full). A batch is cut when the queue holds a full one (its size in compressed bytes, from the last
 * compression ratio, split again if it came out larger) or when the upload period has passed; compression
 * (zlib's fastest level) runs in libuv's thread pool. One upload at a time: a failed one (non-2xx, timeout,
 * refused connection) keeps its batch and is retried after an exponential back-off with jitter; 400/422 drops the
 * batch (malformed), 413 splits it in two (a single event refused is dropped: too_large). close() uploads what
 * waits until the deadline, then counts what is left as dropped (shutdown).
 */
import { constants, gzip, type ZlibOptions } from "node:zlib";
import { promisify } from "node:util";
import Denque from "denque";
import type { Logger } from "pino";
import type { DecisionLogStats, DropReason } from "./stats.js";
import { backoffMs, type HttpTarget } from "../../reload/index.js";
import { upload, type UploadOutcome } from "./upload.js";

const gzipAsync = promisify<string, ZlibOptions, Buffer>(gzip);

/**
 * zlib's fastest level: on decision log batches it costs half of the default level's CPU (2.9 against 6.0 µs per
 * event) for a body 4% larger (8.6 against 9.0 times smaller than the JSON).
 */
const GZIP: ZlibOptions = { level: constants.Z_BEST_SPEED };

export interface ShipperOptions {
  target: HttpTarget;
  /** The bearer token to send now (the token file's), if any. */
  token: () => string | undefined;
  bufferBytes: number;
  /** Largest compressed batch. */
  batchBytes: number;
  periodMs: number;
  timeoutMs: number;
  /** /ready reports a collector failing for longer than this. */
  problemAfterMs: number;
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** [0, 1): the jitter's source (tests pin it). */
  random?: () => number;
  stats: DecisionLogStats;
  logger: Logger;
}

interface Batch {
  events: string[];
  bytes: number;
  /** The compressed body, made again after the batch lost an event to a full buffer. */
  body: Buffer | undefined;
  sending: boolean;
  tries: number;
}

/** Compressed JSON is this many times smaller until a batch says otherwise. */
const FIRST_RATIO = 4;

export class Shipper {
  /** Events not yet cut into a batch, oldest first. */
  private readonly queue = new Denque<string>();
  private queuedBytes = 0;
  /** Batches cut and not yet delivered, oldest first; only the first is ever on the wire. */
  private readonly held: Batch[] = [];
  private ratio = FIRST_RATIO;
  private lastCut = Date.now();
  private failures = 0;
  private failingSince: number | undefined;
  private lastWhy = "";
  private closing = false;
  private wakeUp: (() => void) | undefined;
  private readonly stop = new AbortController();
  private readonly loop: Promise<void>;

  constructor(private readonly o: ShipperOptions) {
    this.loop = this.run();
  }

  /** One encoded event (a JSON object's text). Never blocks; makes room by dropping the oldest if it must. */
  add(json: string): void {
    const size = Buffer.byteLength(json);
    const s = this.o.stats;
    if (this.closing && this.stop.signal.aborted) return this.drop("shutdown", 1);
    while (s.bufferedBytes + size > this.o.bufferBytes) if (!this.dropOldest()) return this.drop("buffer_full", 1);
    this.queue.push(json);
    this.queuedBytes += size;
    s.bufferedBytes += size;
    s.bufferedEvents++;
    if (this.queuedBytes >= this.targetBytes()) this.poke();
  }

  /** Text for /ready when the collector has failed for longer than the bound. */
  problem(now = Date.now()): string | undefined {
    if (this.failingSince === undefined || now - this.failingSince <= this.o.problemAfterMs) return undefined;
    const s = this.o.stats;
    return (
      `the collector ${this.o.target.shown} has failed for ${Math.round((now - this.failingSince) / 1000)} s ` +
      `(${this.lastWhy}); ${s.bufferedEvents} events wait (${s.bufferedBytes} of ${this.o.bufferBytes} buffer bytes)`
    );
  }

  /** Uploads what waits until `deadline` (epoch ms); what is left then is dropped and counted. */
  async close(deadline: number): Promise<void> {
    this.closing = true;
    this.poke();
    const timer = setTimeout(
      () => {
        this.stop.abort();
        this.poke();
      },
      Math.max(0, deadline - Date.now()),
    );
    await this.loop;
    clearTimeout(timer);
    const left = this.o.stats.bufferedEvents;
    if (left > 0) {
      this.drop("shutdown", left);
      this.o.logger.error(
        { event: "decision_logs_lost", events: left, collector: this.o.target.shown, reason: this.lastWhy },
        "decision log events not delivered before the stop's deadline",
      );
    }
  }

  /** Uncompressed bytes that should compress to about one batch. */
  private targetBytes(): number {
    return Math.max(1024, Math.floor(this.o.batchBytes * this.ratio * 0.9));
  }

  private drop(reason: DropReason, n: number): void {
    this.o.stats.dropped[reason] += n;
  }

  private forget(size: number, n = 1): void {
    this.o.stats.bufferedBytes -= size;
    this.o.stats.bufferedEvents -= n;
  }

  /** Drops the oldest event not on the wire; false when there is none. */
  private dropOldest(): boolean {
    const batch = this.held.find((b) => !b.sending && b.events.length > 0);
    let size: number;
    if (batch) {
      size = Buffer.byteLength(batch.events.shift()!);
      batch.bytes -= size;
      batch.body = undefined;
      if (batch.events.length === 0) this.held.splice(this.held.indexOf(batch), 1);
    } else if (this.queue.length > 0) {
      size = Buffer.byteLength(this.queue.shift()!);
      this.queuedBytes -= size;
    } else return false;
    this.forget(size);
    this.drop("buffer_full", 1);
    return true;
  }

  private poke(): void {
    const w = this.wakeUp;
    this.wakeUp = undefined;
    w?.();
  }

  /** Waits `ms`, or less when poked (a full batch, the stop). */
  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => ((this.wakeUp = undefined), resolve()), ms);
      this.wakeUp = () => (clearTimeout(t), resolve());
    });
  }

  /** Takes about one batch's worth of events off the queue and compresses it. */
  private async cut(): Promise<Batch> {
    const target = this.targetBytes();
    const events: string[] = [];
    let bytes = 0;
    while (this.queue.length > 0 && (events.length === 0 || bytes < target)) {
      const e = this.queue.shift()!;
      events.push(e);
      bytes += Buffer.byteLength(e);
    }
    this.queuedBytes -= bytes;
    this.lastCut = Date.now();
    const batch: Batch = { events, bytes, body: undefined, sending: false, tries: 0 };
    this.held.push(batch);
    await this.compress(batch);
    return batch;
  }

  /** Compresses the batch; one that came out larger than a batch may be is halved (the rest goes back first). */
  private async compress(batch: Batch): Promise<void> {
    for (;;) {
      const body = await gzipAsync(`[${batch.events.join(",")}]`, GZIP);
      if (batch.bytes > 0) this.ratio = Math.max(1, batch.bytes / body.length);
      if (body.length <= this.o.batchBytes || batch.events.length === 1) {
        batch.body = body;
        return;
      }
      this.held.splice(this.held.indexOf(batch) + 1, 0, halve(batch));
    }
  }

  private due(): boolean {
    return this.closing || this.queuedBytes >= this.targetBytes() || Date.now() - this.lastCut >= this.o.periodMs;
  }

  private async run(): Promise<void> {
    for (;;) {
      if (this.stop.signal.aborted) return;
      let batch = this.held[0];
      if (batch === undefined) {
        if (this.queue.length === 0) {
          if (this.closing) return;
          this.lastCut = Date.now();
          await this.wait(this.o.periodMs);
          continue;
        }
        if (!this.due()) {
          await this.wait(Math.max(1, this.o.periodMs - (Date.now() - this.lastCut)));
          continue;
        }
        batch = await this.cut();
        batch = this.held[0]!;
      }
      if (batch.body === undefined) await this.compress(batch);
      if (batch.events.length === 0) {
        this.held.shift();
        continue;
      }
      await this.send(batch);
    }
  }

  private async send(batch: Batch): Promise<void> {
    const s = this.o.stats;
    batch.sending = true;
    if (batch.tries++ > 0) s.retries++;
    const outcome: UploadOutcome = await upload(this.o.target, batch.body!, {
      timeoutMs: this.o.timeoutMs,
      token: this.o.token(),
      signal: this.stop.signal,
    });
    batch.sending = false;
    if (outcome.kind === "retry") {
      s.uploads.failed++;
      this.failed(outcome.why);
      if (this.stop.signal.aborted) return;
      await this.backOff();
      return;
    }
    this.answered();
    this.held.shift();
    const n = batch.events.length;
    if (outcome.kind === "ok") {
      s.uploads.ok++;
      s.lastUploadOkMs = Date.now();
      s.sentBytes += batch.body!.length;
      s.sentEvents += n;
      this.forget(batch.bytes, n);
    } else if (outcome.kind === "malformed") {
      s.uploads.malformed++;
      this.forget(batch.bytes, n);
      this.drop("malformed", n);
      this.o.logger.error(
        { event: "decision_logs_refused", status: outcome.status, events: n, collector: this.o.target.shown },
        "the collector refused a batch of decision log events as malformed; dropped",
      );
    } else {
      s.uploads.too_large++;
      if (n === 1) {
        this.forget(batch.bytes, 1);
        this.drop("too_large", 1);
      } else {
        // Split in two, in order, each compressed again before it is sent.
        const rest = halve(batch);
        batch.tries = 0;
        this.held.unshift(batch, rest);
      }
    }
  }

  private failed(why: string): void {
    this.failures++;
    this.lastWhy = why;
    if (this.failingSince === undefined) {
      this.failingSince = Date.now();
      this.o.logger.warn(
        { event: "decision_logs_upload_failed", collector: this.o.target.shown, reason: why },
        "decision log upload failed; the batch is kept and retried",
      );
    }
  }

  private answered(): void {
    if (this.failingSince !== undefined)
      this.o.logger.info(
        {
          event: "decision_logs_upload_recovered",
          collector: this.o.target.shown,
          failedForMs: Date.now() - this.failingSince,
          attempts: this.failures,
        },
        "the collector answers again",
      );
    this.failures = 0;
    this.failingSince = undefined;
  }

  /** Exponential back-off with jitter (half fixed, half random); at most a second apart while stopping. */
  private async backOff(): Promise<void> {
    const maxMs = this.closing ? Math.min(1000, this.o.backoffMaxMs ?? 30_000) : (this.o.backoffMaxMs ?? 30_000);
    const delay = backoffMs(this.failures, {
      firstMs: this.o.backoffBaseMs ?? 250,
      maxMs,
      jitter: 0.5,
      random: this.o.random,
    });
    const end = Date.now() + delay;
    // A stop shortens a long wait (poke), and the wait is then taken again with the stopping ceiling.
    while (!this.stop.signal.aborted && Date.now() < end) {
      const wasClosing = this.closing;
      await this.wait(end - Date.now());
      if (!wasClosing && this.closing) return this.backOff();
    }
  }
}

/** Cuts off the second half of the batch's events (the first keeps at least one) as a new batch, in order. */
function halve(batch: Batch): Batch {
  const rest = batch.events.splice(Math.ceil(batch.events.length / 2));
  const bytes = rest.reduce((n, e) => n + Buffer.byteLength(e), 0);
  batch.bytes -= bytes;
  batch.body = undefined;
  return { events: rest, bytes, body: undefined, sending: false, tries: 0 };
}
