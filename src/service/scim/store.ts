/**
 * Where accepted SCIM steps are kept: a journal file (one process) or PostgreSQL (a fleet). A store loads what it
 * holds into the state at start, persists each step before the request is answered, and (PostgreSQL) follows the
 * steps other replicas commit.
 */
import type { Step } from "./scim-state.js";

/** One write's place in the store: the revision the step must carry, and the commit that makes it durable. */
export interface WriteSlot {
  rev: number;
  commit(step: Step): Promise<void>;
}

export interface StoreStatus {
  kind: "journal" | "postgres";
  [field: string]: unknown;
}

export interface ScimStore {
  /**
   * Hands every stored step to `apply`, in order (start-up); `snapshot` gives what they add up to (a journal
   * compacts itself with it).
   */
  load(apply: (step: Step) => void, snapshot?: () => { rev: number; changes: Step["changes"] }): Promise<void>;
  /**
   * Runs one write: `applied` is the revision the process holds; the store first hands any newer steps to the
   * follower (PostgreSQL), then runs `run` with the slot; a throw from `run` or from commit stores nothing.
   */
  write<T>(applied: number, run: (slot: WriteSlot) => Promise<T>): Promise<T>;
  /**
   * A store that appends steps in order with no lock to take (the journal): the service plans each write at once
   * against the state, and the promise resolves when the step is durable (flushed with the steps handed in around
   * it); a rejection means this step and every one handed in after it were not stored.
   */
  append?(step: Step): Promise<void>;
  /** Starts following the steps other processes commit (PostgreSQL); a journal has none. */
  follow?(apply: (step: Step) => void): void;
  status(): StoreStatus;
  close(): Promise<void>;
}
