/**
 * One mechanism for every hot-reloaded input (policy bundle, synced-users directory, issuer keys):
 * a source triggers attempts (a watched file with debounce plus a periodic re-read, or a polled URL with
 * back-off); each attempt loads and fully validates a candidate, asks the guard, and only then swaps it
 * in. A failure of any step keeps the current value and is recorded in the status and the log.
 * Attempts never overlap: a trigger during an attempt queues exactly one more.
 */
import { watch, type FSWatcher } from "node:fs";
import { stat } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { codeOf, messageOf } from "../errors/caught.js";
import { PortierError } from "../errors/portier-error.js";
import { backoffMs } from "./backoff.js";
import { redactUrls } from "./redact-url.js";
import { newStatus, type ReloadStatus } from "./status.js";

/** Returned by load() when the source has not changed (HTTP 304, same file): a success, nothing to swap. */
export const NOT_MODIFIED = Symbol("not modified");

export interface LoadContext {
  /** Records the HTTP code of this attempt in the status (an error with an httpCode field records it too). */
  httpCode(code: number): void;
}

export interface ReloadLogger {
  info?(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error?(obj: object, msg?: string): void;
}

export interface ReloaderOptions<T> {
  /** Short name used in log events: `<name>_loaded`, `<name>_refused`. */
  name: string;
  /** Where the value comes from; shown redacted. */
  source: string;
  /** The file behind the value, when there is one: each attempt notes its size, times and inode. */
  file?: string | undefined;
  /** Reads and validates a candidate completely; throws to refuse it. */
  load(ctx: LoadContext): Promise<T | typeof NOT_MODIFIED>;
  /** A last check against the current value (e.g. "must not drop half the records"); a string refuses. */
  guard?(next: T, current: T | undefined): string | undefined;
  /** Makes the candidate current (called only for an accepted one). */
  activate(next: T, previous: T | undefined): void;
  /** Log fields describing a value (size, revision ...). */
  describe?(value: T | undefined): Record<string, unknown>;
  logger?: ReloadLogger | undefined;
}

export interface PollOptions {
  intervalMs: number;
  /** Longest wait after repeated failures (exponential back-off from intervalMs); default intervalMs. */
  maxBackoffMs?: number;
}

/** A validated candidate that a guard refused to swap in (e.g. a directory that would drop most users). */
export class GuardRefusal extends PortierError {
  static override readonly code = "reload_refused";
}

const errorMessage = (err: unknown): string => redactUrls(messageOf(err));

export class Reloader<T> {
  current: T | undefined;
  private readonly st: ReloadStatus;
  private running: Promise<boolean> | undefined;
  private queued: Promise<boolean> | undefined;
  private watcher: FSWatcher | undefined;
  private timers = new Set<NodeJS.Timeout>();
  private attemptedSignature: string | undefined;
  private closed = false;
  /** Called after every attempt (accepted or refused). */
  onChange: (() => void) | undefined;

  constructor(private readonly o: ReloaderOptions<T>) {
    this.st = newStatus(redactUrls(o.source));
  }

  status(): ReloadStatus {
    return { ...this.st };
  }

  /** One attempt now (or right after the running one); true when the value is current and valid. */
  reload(): Promise<boolean> {
    if (!this.running) return this.run();
    this.queued ??= this.running.then(() => {
      this.queued = undefined;
      return this.run();
    });
    return this.queued;
  }

  private run(): Promise<boolean> {
    this.running = this.attempt().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async attempt(): Promise<boolean> {
    this.st.lastRequest = new Date().toISOString();
    // The code is written when the attempt ends, so a status read meanwhile stays consistent.
    let httpCode: number | undefined;
    if (this.o.file) this.attemptedSignature = await signature(this.o.file);
    try {
      const next = await this.o.load({ httpCode: (code) => (httpCode = code) });
      return this.conclude({ value: next }, httpCode);
    } catch (err) {
      const code = typeof err === "object" && err !== null && "httpCode" in err ? err.httpCode : undefined;
      return this.conclude({ error: err }, typeof code === "number" ? code : httpCode);
    }
  }

  /** Guard, swap, status and log for one loaded candidate (or a load failure). */
  private conclude(
    outcome: { value: T | typeof NOT_MODIFIED } | { error: unknown },
    httpCode: number | undefined,
  ): boolean {
    const st = this.st;
    const settleCode = () => (httpCode === undefined ? delete st.lastHttpCode : (st.lastHttpCode = httpCode));
    const fields = () => ({ source: st.source, ...this.o.describe?.(this.current) });
    try {
      if ("error" in outcome) throw outcome.error;
      const next = outcome.value;
      if (next !== NOT_MODIFIED) {
        const refusal = this.o.guard?.(next, this.current);
        if (refusal) throw new GuardRefusal(refusal);
        const previous = this.current;
        this.current = next;
        this.o.activate(next, previous);
        if (st.loaded) st.reloads++;
        st.loaded = true;
        st.lastSuccessfulActivation = new Date().toISOString();
        this.o.logger?.info?.({ event: `${this.o.name}_loaded`, ...fields() }, `${this.o.name} loaded`);
      }
      settleCode();
      st.lastSuccessfulRequest = new Date().toISOString();
      st.successfulRequests++;
      delete st.lastError;
      st.consecutiveFailures = 0;
      this.onChange?.();
      return true;
    } catch (err) {
      settleCode();
      st.reloadFailures++;
      st.consecutiveFailures++;
      st.lastError = errorMessage(err);
      const log = this.o.logger?.error?.bind(this.o.logger) ?? this.o.logger?.warn.bind(this.o.logger);
      log?.(
        { event: `${this.o.name}_refused`, ...fields(), error: st.lastError, failures: st.consecutiveFailures },
        st.loaded
          ? `${this.o.name}: new value refused; the previous one stays in use`
          : `${this.o.name} could not be loaded`,
      );
      this.onChange?.();
      return false;
    }
  }

  /**
   * Watches the file (its folder, since deploy tools replace files by rename) with a debounce, and
   * re-reads it every intervalMs when its size, times or inode changed since the last attempt.
   */
  watchFile(o: { debounceMs?: number; intervalMs?: number; watch?: boolean } = {}): void {
    const file = this.o.file;
    if (!file) throw new TypeError("watchFile needs the file option");
    const name = basename(file);
    if (o.watch !== false) {
      let debounce: NodeJS.Timeout | undefined;
      try {
        // Not persistent: a watch alone never keeps the process alive (the service has its server for that).
        this.watcher = watch(dirname(file), { persistent: false }, (_event, changed) => {
          if (changed && changed.toString() !== name) return;
          clearTimeout(debounce);
          this.timers.delete(debounce!);
          debounce = setTimeout(() => void this.reload(), o.debounceMs ?? 150);
          this.timers.add(debounce);
        });
        this.watcher.on("error", () => undefined);
      } catch (err) {
        this.o.logger?.warn(
          { event: `${this.o.name}_watch_failed`, source: this.st.source, error: errorMessage(err) },
          "cannot watch the file; relying on the periodic re-read",
        );
      }
    }
    if (o.intervalMs && o.intervalMs > 0) {
      this.every(o.intervalMs, async () => {
        if ((await signature(file)) !== this.attemptedSignature) await this.reload();
      });
    }
  }

  /** Attempts every intervalMs; after failures waits intervalMs * 2^failures, at most maxBackoffMs. */
  poll(o: PollOptions): void {
    this.every(o.intervalMs, async () => void (await this.reload()), o.maxBackoffMs);
  }

  private every(intervalMs: number, tick: () => Promise<void>, maxBackoffMs = intervalMs): void {
    const schedule = () => {
      if (this.closed) return;
      // The back-off's first step is a failure's: no failure waits intervalMs, one failure twice that.
      const delay = backoffMs(this.st.consecutiveFailures + 1, {
        firstMs: intervalMs,
        maxMs: Math.max(intervalMs, maxBackoffMs),
      });
      const t = setTimeout(() => {
        this.timers.delete(t);
        void tick().finally(schedule);
      }, delay);
      t.unref();
      this.timers.add(t);
    };
    schedule();
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.watcher?.close();
  }
}

async function signature(file: string): Promise<string> {
  try {
    const s = await stat(file);
    return `${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;
  } catch (err) {
    return `missing:${codeOf(err) ?? ""}`;
  }
}
