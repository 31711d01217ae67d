/**
 * The walk of an AuthZEN subject search (which users may call this method on this route), through an index of the
 * users by their directory entry (a tenant and its role names, shared by every user who has the same:
 * CompactEntries.recordsByEntry, kept with the snapshot). The policy judges a user named by a PEP by that entry
 * (roles, tenant, synced) and checks only that the sub is the one named (policies/portier/token/flow.rego), so one
 * user of an entry answers for all its users: an entry one of its users may not call is skipped whole, and only the
 * users of the other entries are visited (each still asked on its own). A page then costs one question per entry
 * and one per candidate, not one per record.
 * Positions (the page token's) are record numbers of the file, then, past them, the users of the SCIM overlay in
 * the order it first held them: an overlay user is walked there, never as the file's record (its state is the
 * overlay's). The overlay's users are asked one by one. When the entries outnumber half the budget, or the index is
 * not a compact one, the page walks the records one by one, as before the index (it always moves forward).
 */
import type { DirectoryEntries, DirectoryEntry } from "./compact-index.js";

export interface SubjectAsk {
  /** Whether this entry's users may call: asked once per entry and page, naming one of its users. */
  entryMayAllow(entry: DirectoryEntry, sub: string): boolean;
  /** A candidate user: asked on its own; false when the page is full. */
  visit(sub: string): boolean;
}

export interface OverlayView {
  get(sub: string): DirectoryEntry | null | undefined;
  subs(): IterableIterator<[string, DirectoryEntry | null]>;
  readonly held: number;
}

/** How many users of an entry are tried as its representative before the entry is walked user by user. */
const REPRESENTATIVE_TRIES = 8;

/** The first index of `list` (ascending) whose value is >= `value`. */
function lowerBound(list: Uint32Array, value: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Walks from `from`, asking at most `budget` questions: the position to continue from, or -1 at the end. */
export function searchSubjects(
  entries: DirectoryEntries | undefined,
  overlay: OverlayView,
  from: number,
  budget: number,
  ask: SubjectAsk,
): number {
  const records = entries?.records ?? 0;
  const end = records + overlay.held;
  let used = 0;
  let position = Math.max(0, from);
  if (position < records && entries) {
    const walked = walkFile(entries, overlay, position, budget, ask);
    if (!walked.done) return walked.next >= end ? -1 : walked.next;
    used = walked.used;
    position = records;
  }
  // The overlay's users, past the file's records.
  let at = records;
  for (const [sub] of overlay.subs()) {
    if (at++ < position) continue;
    if (used >= budget) return at - 1;
    used++;
    if (!ask.visit(sub)) return at >= end ? -1 : at;
  }
  return -1;
}

type Walked = { done: true; used: number } | { done: false; next: number };

/** The file's records from `position`: by the index when it has one and the entries fit the budget. */
function walkFile(
  entries: DirectoryEntries,
  overlay: OverlayView,
  position: number,
  budget: number,
  ask: SubjectAsk,
): Walked {
  const records = entries.records ?? 0;
  const byEntry = entries.recordsByEntry?.();
  const subAt = entries.subAt?.bind(entries);
  const groups: { list: Uint32Array; at: number; entry: DirectoryEntry }[] = [];
  if (byEntry && subAt)
    for (const [entry, list] of byEntry) {
      const at = lowerBound(list, position);
      if (at < list.length) groups.push({ list, at, entry });
    }
  if (!byEntry || !subAt || groups.length > budget / 2) {
    // Record by record (the overlay's users are walked after the file).
    let used = 0;
    let full = false;
    const next =
      entries.scan?.(position, budget, (sub) => {
        if (overlay.get(sub) !== undefined) return true;
        used++;
        full = !ask.visit(sub);
        return !full;
      }) ?? -1;
    return next === -1 && !full ? { done: true, used } : { done: false, next: next === -1 ? records : next };
  }
  let used = 0;
  const open = groups.filter((g) => {
    used++;
    const tries = Math.min(g.list.length, REPRESENTATIVE_TRIES);
    for (let k = 0; k < tries; k++) {
      const sub = subAt(g.list[k]!);
      if (overlay.get(sub) === undefined) return ask.entryMayAllow(g.entry, sub);
    }
    return true; // no representative the overlay leaves alone: its users are asked one by one
  });
  for (;;) {
    let pick: (typeof open)[number] | undefined;
    for (const g of open) if (g.at < g.list.length && (!pick || g.list[g.at]! < pick.list[pick.at]!)) pick = g;
    if (!pick) return { done: true, used };
    const rec = pick.list[pick.at]!;
    const sub = subAt(rec);
    if (overlay.get(sub) !== undefined) {
      pick.at++;
      continue;
    }
    if (used >= budget) return { done: false, next: rec };
    used++;
    pick.at++;
    if (!ask.visit(sub)) return { done: false, next: rec + 1 };
  }
}
