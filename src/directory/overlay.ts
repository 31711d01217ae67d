/**
 * The mutable layer over a loaded directory index: per-user changes pushed by a provisioning source (SCIM),
 * consulted before the index. A sub maps to an entry (synced with these roles and tenant) or to null (not synced,
 * whatever the index holds). Changes are applied in one synchronous step, so a decision sees all of a step or
 * none of it; nothing of the index is copied or re-read. Entries are shared per (tenant, names), as the loader
 * shares them, so a decision's role resolution stays one WeakMap lookup per distinct entry.
 */
import type { DirectoryEntry } from "./compact-index.js";
import type { EntryRoles } from "./role-resolver.js";

/** One user's new state: an entry, or null for "not synced" (deleted, deactivated, unmapped). */
export interface OverlayChange {
  sub: string;
  entry: { tenant_id: string; names: readonly string[] } | null;
}

export class DirectoryOverlay {
  private readonly bySub = new Map<string, DirectoryEntry | null>();
  private readonly shared = new Map<string, DirectoryEntry>();
  /** Subs whose entry names a role the live bundle's names cannot resolve. */
  private unresolvedSubs = new Set<string>();
  private rolesOf: EntryRoles | undefined;

  get(sub: string): DirectoryEntry | null | undefined {
    return this.bySub.get(sub);
  }

  /** Subs with an entry (synced, if their roles resolve). */
  entries = 0;

  get held(): number {
    return this.bySub.size;
  }

  get unresolved(): number {
    return this.unresolvedSubs.size;
  }

  /** Every sub the layer holds, with its entry or null. */
  subs(): IterableIterator<[string, DirectoryEntry | null]> {
    return this.bySub.entries();
  }

  /** Applies every change of one step at once (a later change for the same sub wins). */
  apply(changes: readonly OverlayChange[]): void {
    for (const { sub, entry } of changes) {
      const shared = entry ? this.share(entry) : null;
      if (this.bySub.get(sub)) this.entries--;
      if (shared) this.entries++;
      this.bySub.set(sub, shared);
      if (shared && this.rolesOf && !this.rolesOf(shared)) this.unresolvedSubs.add(sub);
      else this.unresolvedSubs.delete(sub);
    }
  }

  /** A new bundle's names: the subs whose roles they cannot resolve are counted again. */
  recount(rolesOf: EntryRoles): void {
    this.rolesOf = rolesOf;
    const unresolved = new Set<string>();
    for (const [sub, entry] of this.bySub) if (entry && !rolesOf(entry)) unresolved.add(sub);
    this.unresolvedSubs = unresolved;
  }

  private share(entry: { tenant_id: string; names: readonly string[] }): DirectoryEntry {
    const key = JSON.stringify([entry.tenant_id, entry.names]);
    let found = this.shared.get(key);
    if (!found) {
      found = Object.freeze({ tenant_id: entry.tenant_id, names: Object.freeze([...entry.names]) });
      this.shared.set(key, found);
    }
    return found;
  }
}
