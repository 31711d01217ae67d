/**
 * The SCIM resources held in memory, with the indexes the protocol's lookups need (userName and externalId of
 * users, displayName of groups, the groups of each user), and the revision of the last step applied. A step is
 * what one accepted request changed: resources written whole or deleted, under one revision. applyStep puts a
 * step into the resources and returns the directory changes it makes for every user it touches (the user itself,
 * and the members of a group before and after), so the caller applies them to the directory at once.
 */
import type { OverlayChange } from "../../directory/index.js";
import { mapUser, type ScimMapping } from "./mapping.js";
import { ResourceTable } from "./resource-table.js";
import { membersOf, type ResourceType, type ScimResource } from "./resources.js";

export interface Change {
  type: ResourceType;
  id: string;
  /** The resource as written, or null when deleted. */
  resource: ScimResource | null;
  /**
   * The resource's JSON text when the reader has it already (a snapshot row from PostgreSQL), kept as is instead
   * of serializing the resource again. Only on changes read from a store, never on ones written to it.
   */
  text?: string;
}

export interface Step {
  rev: number;
  changes: Change[];
  /** Part of a snapshot taken at `rev` (PostgreSQL start-up, in batches): applied even at the same revision. */
  snapshot?: true;
}

const key = (s: string) => s.toLowerCase();

export class ScimState {
  /** Users as JSON text, parsed when read (the bulk of the state); groups, few and read at each change, parsed. */
  readonly users = new ResourceTable();
  readonly groups = new Map<string, ScimResource>();
  private readonly byUserName = new Map<string, string>();
  private readonly byExternalId = new Map<string, string>();
  private readonly byGroupName = new Map<string, string>();
  private readonly groupsOfUser = new Map<string, Set<string>>();
  /** Users that map to a record with an entry (synced if their roles resolve). */
  synced = 0;
  rev = 0;

  constructor(private readonly mapping: ScimMapping) {}

  get size(): number {
    return this.users.size + this.groups.size;
  }

  userIdByName(userName: string): string | undefined {
    return this.byUserName.get(key(userName));
  }

  userIdByExternalId(externalId: string): string | undefined {
    return this.byExternalId.get(externalId);
  }

  groupIdByName(displayName: string): string | undefined {
    return this.byGroupName.get(key(displayName));
  }

  groupsOf(userId: string): ReadonlySet<string> {
    return this.groupsOfUser.get(userId) ?? new Set();
  }

  /** The record a user maps to now (undefined: no sub); `user` when the caller holds it parsed already. */
  recordOf(userId: string, user: ScimResource | undefined = this.users.get(userId)): OverlayChange | undefined {
    if (!user) return undefined;
    const names: string[] = [];
    for (const g of this.groupsOf(userId)) {
      const name = this.groups.get(g)?.displayName;
      if (typeof name === "string") names.push(name);
    }
    return mapUser(user, names, this.mapping);
  }

  /** Every resource held, users first (a group's members name them), as changes that rebuild the state. */
  snapshot(): Change[] {
    const out: Change[] = [];
    for (const [id, resource] of this.users) out.push({ type: "User", id, resource });
    for (const [id, resource] of this.groups) out.push({ type: "Group", id, resource });
    return out;
  }

  /** The users a step touches: its users, and the members of its groups before and after. */
  touched(changes: readonly Change[]): Set<string> {
    const ids = new Set<string>();
    for (const c of changes) {
      if (c.type === "User") ids.add(c.id);
      else {
        for (const m of membersOf(this.groups.get(c.id))) ids.add(m.value);
        for (const m of membersOf(c.resource ?? undefined)) ids.add(m.value);
      }
    }
    return ids;
  }

  /** Applies a step (a step at or below the current revision is skipped: already applied) and returns its effect. */
  applyStep(step: Step): OverlayChange[] {
    if (step.rev < this.rev || (step.rev === this.rev && !step.snapshot)) return [];
    const touched = this.touched(step.changes);
    const before = new Map<string, OverlayChange | undefined>();
    for (const id of touched) before.set(id, this.recordOf(id));
    // The users as the step leaves them, parsed: no second parse of the text just stored.
    const written = new Map<string, ScimResource | undefined>();
    for (const c of step.changes) {
      if (c.type === "User") {
        this.putUser(c.id, c.resource, c.text);
        written.set(c.id, c.resource ?? undefined);
      } else this.putGroup(c.id, c.resource);
    }
    this.rev = step.rev;
    const out: OverlayChange[] = [];
    for (const id of touched) {
      const was = before.get(id);
      const is = written.has(id) ? this.recordOf(id, written.get(id)) : this.recordOf(id);
      if (was?.entry) this.synced--;
      if (is?.entry) this.synced++;
      // A sub that changed (or went away) is no longer this user's: it is not synced from here.
      if (was && was.sub !== is?.sub) out.push({ sub: was.sub, entry: null });
      if (is) out.push(is);
    }
    return out;
  }

  /** What a step's changes replace: each resource as it is now (null: absent), to take the step back later. */
  priorOf(changes: readonly Change[]): Change[] {
    return changes.map((c) => ({
      type: c.type,
      id: c.id,
      resource: (c.type === "User" ? this.users : this.groups).get(c.id) ?? null,
    }));
  }

  /**
   * Takes back the last step applied (one never made durable): its prior resources (priorOf, taken before the
   * step) put back, last change first, and the revision lowered to `rev`, the one before the step.
   */
  revert(prior: readonly Change[], rev: number): void {
    this.applyStep({ rev: this.rev, changes: [...prior].reverse(), snapshot: true });
    this.rev = rev;
  }

  private putUser(id: string, next: ScimResource | null, text?: string): void {
    const prev = this.users.get(id);
    if (prev) {
      this.byUserName.delete(key(prev.userName as string));
      if (typeof prev.externalId === "string") this.byExternalId.delete(prev.externalId);
    }
    if (!next) {
      this.users.delete(id);
      return;
    }
    this.users.set(id, next, text);
    this.byUserName.set(key(next.userName as string), id);
    if (typeof next.externalId === "string") this.byExternalId.set(next.externalId, id);
  }

  private putGroup(id: string, next: ScimResource | null): void {
    const prev = this.groups.get(id);
    if (prev) {
      this.byGroupName.delete(key(prev.displayName as string));
      for (const m of membersOf(prev)) this.groupsOfUser.get(m.value)?.delete(id);
    }
    if (!next) {
      this.groups.delete(id);
      return;
    }
    this.groups.set(id, next);
    this.byGroupName.set(key(next.displayName as string), id);
    for (const m of membersOf(next)) {
      let set = this.groupsOfUser.get(m.value);
      if (!set) this.groupsOfUser.set(m.value, (set = new Set()));
      set.add(id);
    }
  }
}
