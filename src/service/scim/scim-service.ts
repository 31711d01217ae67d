/**
 * The SCIM service provider's core, apart from HTTP: the state, the store and the directory it feeds. With
 * PostgreSQL, writes run one at a time: the store's slot (after catching up with other replicas), the plan against
 * the state, the de-provisioning guard, the commit, then the step applied to the state and to the directory in one
 * synchronous step, and only then the answer. With the journal (a store that appends), a write is planned, guarded
 * and put into the state at once, so the next request plans against it, and handed to the journal, which flushes
 * the steps that arrive together in one group; once its step is on disk it reaches the directory (steps in order)
 * and is answered. Decisions never see a step before it is durable; a failed flush takes back, newest first,
 * every step not yet on disk. Reads answer from the state.
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

/** A step put into the state and not yet on disk: what takes it back. */
interface InFlight {
  rev: number;
  /** The revision before it. */
  before: number;
  prior: Step["changes"];
}

export class ScimService {
  readonly state: ScimState;
  private readonly guard: DeprovisionGuard;
  private queue: Promise<unknown> = Promise.resolve();
  private writes = 0;
  /** Steps in the state that the journal has not flushed yet, oldest first. */
  private readonly inFlight: InFlight[] = [];
  private readonly flushed = new Set<Promise<unknown>>();

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
    if (this.store.append) return this.writeAppended(req, this.store.append.bind(this.store));
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

  /** One write through a store that appends (the journal): planned at once, answered once flushed (group commit). */
  private writeAppended(req: WriteRequest, append: (step: Step) => Promise<void>): Promise<WriteResult> {
    let step: Step;
    let plan: ReturnType<typeof planWrite>;
    let effect: ReturnType<ScimState["applyStep"]>;
    let flight: InFlight;
    try {
      const now = (this.o.now?.() ?? new Date()).toISOString();
      const rev = this.state.rev + 1;
      plan = planWrite(this.state, req, { rev, now }, this.o.limits);
      const removed = this.removedBy(plan.changes);
      const refusal = this.guard.refusal(removed, this.state.synced);
      if (refusal) throw new ScimError(503, undefined, refusal, this.guard.retryAfterSeconds());
      step = { rev, changes: plan.changes };
      flight = { rev, before: this.state.rev, prior: this.state.priorOf(step.changes) };
      effect = this.state.applyStep(step);
      // Counted now, so that the requests planned behind it are guarded with it (kept if the flush fails).
      this.guard.removed(removed);
      this.inFlight.push(flight);
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    const done = append(step).then(
      () => {
        this.inFlight.splice(this.inFlight.indexOf(flight), 1);
        // The journal answers in order: the directory takes the steps in order.
        if (effect.length) this.directory.applyChanges(effect);
        this.writes++;
        return { status: plan.status, resource: plan.resource };
      },
      (err: unknown) => {
        this.takeBack(flight.rev);
        throw err;
      },
    );
    this.flushed.add(done);
    void done.finally(() => this.flushed.delete(done)).catch(() => undefined);
    return done;
  }

  /** A flush failed: every step from `rev` on leaves the state, newest first (none reached the directory). */
  private takeBack(rev: number): void {
    for (let last = this.inFlight.at(-1); last && last.rev >= rev; last = this.inFlight.at(-1)) {
      this.state.revert(last.prior, last.before);
      this.inFlight.pop();
    }
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
    return this.queue.then(() => Promise.allSettled([...this.flushed])).then(() => this.store.close());
  }
}
