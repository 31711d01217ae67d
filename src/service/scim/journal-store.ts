/**
 * --scim-journal FILE: the single-process store. Every accepted step is appended to the file as one JSON line
 * and flushed to disk (fdatasync) before the request is answered; start-up replays the lines in order. Group
 * commit: the steps that arrive while a flush is in flight are written and flushed together by the next one, so
 * concurrent requests share a flush (each still answered only once its own line is on disk). A write or flush
 * that fails cuts the file back to its last flushed length and fails every step not yet flushed; if even that
 * cut fails, the journal refuses every later write until a restart (whose replay cuts a torn last line).
 * A last line cut short by a crash (never acknowledged: its flush had not returned) is cut off at start and
 * reported; any other line that is not a step is a start-up failure naming its line, since skipping it would
 * lose a change.
 * Compaction at start: when the journal holds many more steps than resources, it is rewritten as a snapshot (the
 * resources at the current revision, in `snapshot` steps) into a new file, flushed, and renamed over the old one.
 */
import { createReadStream } from "node:fs";
import { open, rename, rm, stat, truncate, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";
import { createInterface } from "node:readline";
import { codeOf } from "../../errors/caught.js";
import { PortierError } from "../../errors/portier-error.js";
import type { Step } from "./scim-state.js";
import type { ScimStore, StoreStatus, WriteSlot } from "./store.js";

export class JournalError extends PortierError {
  static override readonly code = "scim_journal_invalid";
}

/** Compaction at start when the journal holds more than this many steps, and more than RATIO per resource. */
const COMPACT_MIN_STEPS = 10_000;
const COMPACT_RATIO = 4;
/** Resources per snapshot line. */
const SNAPSHOT_LINE = 500;

function isStep(v: unknown): v is Step {
  if (typeof v !== "object" || v === null) return false;
  const s = v as Partial<Step>;
  return Number.isSafeInteger(s.rev) && Array.isArray(s.changes);
}

/** A step's line waiting for the next flush, and its request's answer. */
interface Waiting {
  line: string;
  resolve(): void;
  reject(err: Error): void;
}

export class JournalStore implements ScimStore {
  private handle: FileHandle | undefined;
  /** Steps flushed, and the flushes that carried them (fewer under concurrent writes: group commit). */
  private written = 0;
  private flushes = 0;
  private lastError: string | undefined;
  /** The file's length up to its last flushed line: what a failed write is cut back to. */
  private durable = 0;
  /** Lines handed in while a flush runs: the next flush takes them all. */
  private waiting: Waiting[] = [];
  private flushing: Promise<void> | undefined;
  /** Set when a failed write could not be cut back: every later write is refused. */
  private broken: string | undefined;
  /** Lines cut off at start (a torn last write). */
  private cut = 0;

  constructor(
    readonly file: string,
    private readonly warn: (obj: object, msg: string) => void = () => undefined,
  ) {}

  /**
   * `snapshot` gives the resources held after the replay (for compaction); without it the journal is never
   * rewritten.
   */
  async load(apply: (step: Step) => void, snapshot?: () => { rev: number; changes: Step["changes"] }): Promise<void> {
    let size = 0;
    try {
      size = (await stat(this.file)).size;
    } catch (err) {
      if (codeOf(err) !== "ENOENT") throw new JournalError(`${this.file}: cannot read it (${codeOf(err) ?? "error"})`);
    }
    let good = 0;
    let steps = 0;
    if (size > 0) {
      const lines = createInterface({ input: createReadStream(this.file, { encoding: "utf8" }), crlfDelay: Infinity });
      let n = 0;
      let offset = 0;
      let pending: string | undefined;
      let pendingLine = 0;
      for await (const line of lines) {
        n++;
        if (pending !== undefined)
          throw new JournalError(`${this.file}:${pendingLine}: not a journal step (${pending}); the file is damaged`);
        steps++;
        let step: unknown;
        try {
          step = JSON.parse(line);
        } catch {
          step = undefined;
        }
        const bytes = Buffer.byteLength(line) + 1;
        if (!isStep(step)) {
          pending = line.length > 40 ? `${line.slice(0, 40)}...` : line;
          pendingLine = n;
        } else {
          apply(step);
          offset += bytes;
          good = offset;
        }
      }
      // The last line may be a write cut short by a crash: it was never answered, so it is dropped.
      if (pending !== undefined || good < size) {
        this.cut = 1;
        this.warn(
          { event: "scim_journal_cut", file: this.file, keptBytes: good, size },
          "the SCIM journal ends with an unfinished line (a crash during a write, never acknowledged); cut off",
        );
        await truncate(this.file, good);
      }
    }
    if (snapshot) {
      const now = snapshot();
      if (steps > COMPACT_MIN_STEPS && steps > COMPACT_RATIO * now.changes.length) await this.compact(now);
    }
    try {
      this.handle = await open(this.file, "a", 0o600);
      // A complete last step whose newline was not written: the next step starts on a line of its own.
      if (good === size + 1) await this.handle.write("\n");
      this.durable = (await this.handle.stat()).size;
    } catch (err) {
      throw new JournalError(`${this.file}: cannot open it to append (${codeOf(err) ?? "error"})`);
    }
  }

  /** Rewrites the journal as a snapshot at `rev`: a new file, flushed, renamed over the old one, the folder flushed. */
  private async compact(now: { rev: number; changes: Step["changes"] }): Promise<void> {
    const temp = `${this.file}.${process.pid}.compacting`;
    const out = await open(temp, "w", 0o600);
    try {
      for (let i = 0; i < now.changes.length || i === 0; i += SNAPSHOT_LINE) {
        const step: Step = { rev: now.rev, changes: now.changes.slice(i, i + SNAPSHOT_LINE), snapshot: true };
        await out.write(`${JSON.stringify(step)}\n`);
      }
      await out.datasync();
      await out.close();
      await rename(temp, this.file);
      const folder = await open(dirname(this.file), "r");
      await folder.sync().finally(() => folder.close());
      this.warn(
        { event: "scim_journal_compacted", file: this.file, revision: now.rev, resources: now.changes.length },
        "the SCIM journal was rewritten as a snapshot of its resources",
      );
    } catch (err) {
      await out.close().catch(() => undefined);
      await rm(temp, { force: true });
      throw new JournalError(`${this.file}: cannot compact it (${codeOf(err) ?? "error"})`);
    }
  }

  write<T>(rev: number, run: (slot: WriteSlot) => Promise<T>): Promise<T> {
    return run({ rev: rev + 1, commit: (step) => this.append(step) });
  }

  /** Resolves once the step's line is on disk, flushed with the lines handed in around it. */
  append(step: Step): Promise<void> {
    if (!this.handle) return Promise.reject(new JournalError(`${this.file}: the journal is closed`));
    if (this.broken) return Promise.reject(new JournalError(this.broken));
    const line = `${JSON.stringify(step)}\n`;
    return new Promise((resolve, reject) => {
      this.waiting.push({ line, resolve, reject });
      this.flushing ??= this.flushAll().finally(() => {
        this.flushing = undefined;
      });
    });
  }

  /** Writes and flushes what waits, one group at a time, until nothing does. */
  private async flushAll(): Promise<void> {
    while (this.waiting.length > 0) {
      const group = this.waiting;
      this.waiting = [];
      const text = group.length === 1 ? group[0]!.line : group.map((w) => w.line).join("");
      try {
        const handle = this.handle;
        if (!handle) throw new Error("closed");
        if (this.broken) throw new Error("refused");
        // appendFile writes all of it (a short write is continued); O_APPEND puts it at the end.
        await handle.appendFile(text);
        await handle.datasync();
      } catch (err) {
        await this.failed(group, err);
        continue;
      }
      this.durable += Buffer.byteLength(text);
      this.written += group.length;
      this.flushes++;
      this.lastError = undefined;
      for (const w of group) w.resolve();
    }
  }

  /**
   * A group's write or flush failed: the group and every line handed in since fail (their requests are answered
   * 503; the service takes their steps back), and the file is cut back to its flushed length.
   */
  private async failed(group: Waiting[], err: unknown): Promise<void> {
    const failing = [...group, ...this.waiting];
    this.waiting = [];
    this.lastError = this.broken ?? `${this.file}: cannot write (${codeOf(err) ?? "error"})`;
    const error = new JournalError(this.lastError);
    for (const w of failing) w.reject(error);
    if (this.broken || !this.handle) return;
    try {
      await this.handle.truncate(this.durable);
    } catch (cut) {
      this.broken =
        `${this.file}: a write failed (${codeOf(err) ?? "error"}) and the journal could not be cut back to its ` +
        `last flushed line (${codeOf(cut) ?? "error"}); SCIM writes are refused until a restart`;
      this.lastError = this.broken;
    }
  }

  status(): StoreStatus {
    return {
      kind: "journal",
      file: this.file,
      written: this.written,
      flushes: this.flushes,
      ...(this.cut ? { cutAtStart: this.cut } : {}),
      ...(this.lastError ? { lastError: this.lastError } : {}),
    };
  }

  async close(): Promise<void> {
    await this.flushing;
    await this.handle?.close();
    this.handle = undefined;
  }
}
