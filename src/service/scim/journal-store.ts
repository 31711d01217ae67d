/**
 * --scim-journal FILE: the single-process store. Every accepted step is appended to the file as one JSON line
 * and flushed to disk (fdatasync) before the request is answered; start-up replays the lines in order. A last
 * line cut short by a crash (never acknowledged: its flush had not returned) is cut off and reported; any other
 * line that is not a step is a start-up failure naming its line, since skipping it would lose a change.
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

export class JournalStore implements ScimStore {
  private handle: FileHandle | undefined;
  private written = 0;
  private lastError: string | undefined;
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

  async write<T>(rev: number, run: (slot: WriteSlot) => Promise<T>): Promise<T> {
    return run({
      rev: rev + 1,
      commit: async (step) => {
        const handle = this.handle;
        if (!handle) throw new JournalError(`${this.file}: the journal is closed`);
        try {
          await handle.write(`${JSON.stringify(step)}\n`);
          await handle.datasync();
          this.written++;
          this.lastError = undefined;
        } catch (err) {
          this.lastError = `${this.file}: cannot write (${codeOf(err) ?? "error"})`;
          throw new JournalError(this.lastError);
        }
      },
    });
  }

  status(): StoreStatus {
    return {
      kind: "journal",
      file: this.file,
      written: this.written,
      ...(this.cut ? { cutAtStart: this.cut } : {}),
      ...(this.lastError ? { lastError: this.lastError } : {}),
    };
  }

  async close(): Promise<void> {
    await this.handle?.close();
    this.handle = undefined;
  }
}
