/**
 * The synced-users directory: an in-memory index (compact hash table, O(1) lookups) loaded from a file and reloaded
 * when it changes (watch, debounce, atomic swap). A broken file keeps the old index and is reported.
 */
import { watch, type FSWatcher } from "node:fs";
import { basename, dirname } from "node:path";
import { loadDirectoryFile, type DirectoryEntries, type DirectoryEntry } from "./load-directory.js";
import { loadRoleResolver, type RoleResolver } from "./role-names.js";

export { parseDirectory, loadDirectoryFile, DirectoryLoadError } from "./load-directory.js";
export type { DirectoryEntries, DirectoryEntry, DirectoryIndex } from "./load-directory.js";
export { loadRoleResolver } from "./role-names.js";

export interface DirectoryLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface DirectoryStatus {
  file: string;
  loaded: boolean;
  size: number;
  rejected: number;
  loadedAt?: string;
  lastError?: string;
  reloads: number;
  reloadFailures: number;
}

export class Directory {
  private entries: DirectoryEntries = new Map<string, DirectoryEntry>();
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly state: DirectoryStatus;
  /** Called after every successful (re)load. */
  onChange: (() => void) | undefined;

  private constructor(readonly file: string, private readonly resolve: RoleResolver, private readonly logger?: DirectoryLogger) {
    this.state = { file, loaded: false, size: 0, rejected: 0, reloads: 0, reloadFailures: 0 };
  }

  /** Loads the file once (throws on an unreadable or unparsable file) and optionally watches it. */
  static async open(file: string, rolesFile: string, options: { watch?: boolean; logger?: DirectoryLogger } = {}): Promise<Directory> {
    const dir = new Directory(file, loadRoleResolver(rolesFile), options.logger);
    await dir.reload(true);
    if (options.watch !== false) dir.startWatching();
    return dir;
  }

  lookup(sub: string): DirectoryEntry | undefined {
    return this.entries.get(sub);
  }

  get size(): number {
    return this.entries.size;
  }

  status(): DirectoryStatus {
    return { ...this.state };
  }

  /** Reads the file and swaps the index; on failure the old index stays. */
  async reload(first = false): Promise<boolean> {
    const started = Date.now();
    try {
      const index = await loadDirectoryFile(this.file, this.resolve);
      this.entries = index.entries;
      Object.assign(this.state, { loaded: true, size: index.entries.size, rejected: index.rejected, loadedAt: new Date().toISOString(), lastError: undefined });
      if (!first) this.state.reloads++;
      for (const p of index.problems) this.logger?.warn({ event: "directory_record_rejected", problem: p }, "directory record rejected");
      this.logger?.info({ event: "directory_loaded", file: this.file, size: index.entries.size, rejected: index.rejected, ms: Date.now() - started }, "directory loaded");
      this.onChange?.();
      return true;
    } catch (err) {
      if (first) throw err;
      this.state.reloadFailures++;
      this.state.lastError = (err as Error).message;
      this.logger?.error({ event: "directory_reload_failed", file: this.file, error: (err as Error).message }, "directory reload refused; the previous index keeps serving");
      return false;
    }
  }

  private startWatching(): void {
    // Watch the folder: editors and deploy tools replace the file (rename), which a file watch misses.
    const name = basename(this.file);
    try {
      this.watcher = watch(dirname(this.file), (_event, changed) => {
        if (changed && changed.toString() !== name) return;
        clearTimeout(this.timer);
        this.timer = setTimeout(() => void this.reload(), 150);
      });
      this.watcher.on("error", () => undefined);
    } catch (err) {
      this.logger?.warn({ event: "directory_watch_failed", error: (err as Error).message }, "cannot watch the directory file");
    }
  }

  close(): void {
    clearTimeout(this.timer);
    this.watcher?.close();
  }
}
