/**
 * The SCIM service provider's core, apart from HTTP: the state, the store and the directory it feeds. Writes
 * run one at a time: the store's slot (after catching up with other replicas), the plan against the state,
 * the de-provisioning guard, the commit (on disk or in PostgreSQL), then the step applied to the state and to
 * the directory in one synchronous step, and only then the answer. Reads answer from the state.
 */
import type { Directory } from "../../directory/index.js";
import { DeprovisionGuard, type DeprovisionGuardOptions } from "./deprovision-guard.js";
import type { ScimMapping } from "./mapping.js";
import { planWrite, type OperationLimits, type WriteRequest } from "./operations.js";
import type { ScimResource } from "./resources.js";
import { ScimError } from "./scim-error.js";
import { ScimState, type Step } from "./scim-state.js";
import type { ScimStore, StoreStatus } from "./store.js";

export interface ScimServiceOptions {
  mapping: ScimMapping;
  limits: OperationLimits;
  guard: DeprovisionGuardOptions;
  now?: () => Date;
}

export interface ScimStatus {
  revision: number;
  users: number;
  groups: number;
  /** Users that map to a record (synced when their roles resolve). */
  synced: number;
  writes: number;
  /** Requests refused by the de-provisioning guard. */
  held: number;
  lastHeld?: string;
  lastHeldAt?: string;
  store: StoreStatus;
}

export interface WriteResult {
  status: number;
  resource: ScimResource | null;
}

export class ScimService {
  readonly state: ScimState;
  private readonly guard: DeprovisionGuard;
  private queue: Promise<unknown> = Promise.resolve();
  private writes = 0;

  constructor(
    private readonly store: ScimStore,
    private readonly directory: Pick<Directory, "applyChanges">,
    private readonly o: ScimServiceOptions,
  ) {
    this.state = new ScimState(o.mapping);
    this.guard = new DeprovisionGuard(o.guard);
  }

  /** Loads the store (replay or snapshot) into the state and the directory, then follows other replicas. */
  async open(): Promise<void> {
    await this.store.load(
      (step) => this.apply(step),
      () => ({ rev: this.state.rev, changes: this.state.snapshot() }),
    );
    this.store.follow?.((step) => this.apply(step));
  }

  /** A step committed (here or by another replica) into the state and the directory, at once. */
  private apply(step: Step): void {
    const changes = this.state.applyStep(step);
    if (changes.length) this.directory.applyChanges(changes);
  }

  /** One write request: planned, guarded, stored, applied; serialised with every other write of this process. */
  write(req: WriteRequest): Promise<WriteResult> {
    const run = this.queue.then(() => this.writeNow(req));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private writeNow(req: WriteRequest): Promise<WriteResult> {
    return this.store.write(this.state.rev, async (slot) => {
      const now = (this.o.now?.() ?? new Date()).toISOString();
      const plan = planWrite(this.state, req, { rev: slot.rev, now }, this.o.limits);
      const removed = this.removedBy(plan.changes);
      const refusal = this.guard.refusal(removed, this.state.synced);
      if (refusal) throw new ScimError(503, undefined, refusal, this.guard.retryAfterSeconds());
      const step: Step = { rev: slot.rev, changes: plan.changes };
      await slot.commit(step);
      this.apply(step);
      this.guard.removed(removed);
      this.writes++;
      return { status: plan.status, resource: plan.resource };
    });
  }

  /** Users a step would turn from synced to not synced. */
  private removedBy(changes: Step["changes"]): number {
    const touched = this.state.touched(changes);
    let before = 0;
    for (const id of touched) if (this.state.recordOf(id)?.entry) before++;
    if (before === 0) return 0;
    const probe = new ScimState(this.o.mapping);
    // Only the touched users and the groups they belong to matter: a small state holding those, step applied.
    const groups = new Set<string>();
    for (const id of touched) for (const g of this.state.groupsOf(id)) groups.add(g);
    for (const c of changes) if (c.type === "Group") groups.add(c.id);
    const seed: Step["changes"] = [];
    for (const id of touched) {
      const user = this.state.users.get(id);
      if (user) seed.push({ type: "User", id, resource: user });
    }
    for (const id of groups) {
      const group = this.state.groups.get(id);
      if (group) seed.push({ type: "Group", id, resource: group });
    }
    probe.applyStep({ rev: 1, changes: seed });
    probe.applyStep({ rev: 2, changes });
    let after = 0;
    for (const id of touched) if (probe.recordOf(id)?.entry) after++;
    return Math.max(0, before - after);
  }

  status(): ScimStatus {
    return {
      revision: this.state.rev,
      users: this.state.users.size,
      groups: this.state.groups.size,
      synced: this.state.synced,
      writes: this.writes,
      held: this.guard.held,
      ...(this.guard.lastHeld ? { lastHeld: this.guard.lastHeld } : {}),
      ...(this.guard.lastHeldAt ? { lastHeldAt: new Date(this.guard.lastHeldAt).toISOString() } : {}),
      store: this.store.status(),
    };
  }

  close(): Promise<void> {
    return this.queue.then(() => this.store.close());
  }
}
