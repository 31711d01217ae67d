/**
 * The subject search's walk by the index of users per entry (search-subjects.ts), on a 30,000-record directory with
 * 12 editors among viewers, a replaced record, and a SCIM overlay that promotes, removes and adds users: every page
 * of every walk gives exactly the users a record-by-record walk would (file order, then the overlay's), and the
 * questions asked (counted through SubjectAsk, the seam the service's evaluations go through) are one per entry and
 * one per candidate of the entries that may call, never one per record. With the entries outnumbering half the
 * budget, the walk goes record by record and still ends with the same users.
 */
import { describe, expect, it } from "vitest";
import { CompactIndexBuilder, type DirectoryEntry } from "../../src/directory/compact-index.js";
import { DirectoryOverlay } from "../../src/directory/overlay.js";
import { searchSubjects } from "../../src/directory/search-subjects.js";

const N = 30_000;
const VIEWER: DirectoryEntry = { tenant_id: "t", names: ["viewer"] };
const EDITOR: DirectoryEntry = { tenant_id: "t", names: ["editor"] };
const OTHER_TENANT_EDITOR: DirectoryEntry = { tenant_id: "u", names: ["editor"] };
const SHARED = [VIEWER, EDITOR, OTHER_TENANT_EDITOR];
const sub = (i: number) => `user-${i}`;

/** Editors at every 2,500th record; the other tenant's editors at 7 and 29,999; user-5 is filed twice. */
function directory() {
  const b = new CompactIndexBuilder(SHARED);
  for (let i = 0; i < N; i++) b.add(sub(i), i % 2500 === 1 ? 1 : i === 7 || i === N - 1 ? 2 : 0);
  b.add(sub(5), 1); // a later record replaces user-5's: an editor now, at position N
  const entries = b.finish();
  const overlay = new DirectoryOverlay();
  overlay.apply([
    { sub: sub(100), entry: { tenant_id: "t", names: ["editor"] } }, // promoted
    { sub: sub(2501), entry: null }, // removed
    { sub: "scim-new", entry: { tenant_id: "t", names: ["editor"] } }, // added
    { sub: "scim-viewer", entry: { tenant_id: "t", names: ["viewer"] } },
  ]);
  return { entries, overlay };
}

/** The policy's stand-in: editors of tenant t may call. */
const mayCall = (e: DirectoryEntry | null | undefined) => !!e && e.tenant_id === "t" && e.names.includes("editor");

function walk(budget: number, limit: number) {
  const { entries, overlay } = directory();
  const effective = (s: string) => {
    const o = overlay.get(s);
    return o !== undefined ? o : entries.get(s);
  };
  const pages: { results: string[]; questions: number }[] = [];
  let position = 0;
  for (let guard = 0; guard < 10_000; guard++) {
    const results: string[] = [];
    let questions = 0;
    const next = searchSubjects(entries, overlay, position, budget, {
      entryMayAllow: (entry, s) => {
        questions++;
        expect(effective(s)).toBe(entry); // the representative is one of the entry's users, untouched by the overlay
        return mayCall(entry);
      },
      visit: (s) => {
        questions++;
        if (mayCall(effective(s))) results.push(s);
        return results.length < limit;
      },
    });
    pages.push({ results, questions });
    if (next === -1) break;
    expect(next).toBeGreaterThan(position - 1);
    position = next;
  }
  return pages;
}

/** What a record-by-record walk finds: live file records not held by the overlay, then the overlay's users. */
function expected(): string[] {
  const { entries, overlay } = directory();
  const out: string[] = [];
  for (let i = 0; i < N; i++) {
    if (i === 5) continue; // replaced: user-5 is live at its later record, which comes last in the file
    if (overlay.get(sub(i)) === undefined && mayCall(entries.get(sub(i)))) out.push(sub(i));
  }
  out.push(sub(5));
  for (const [s, e] of overlay.subs()) if (mayCall(e)) out.push(s);
  return out;
}

describe("searchSubjects", () => {
  it("finds the users a record-by-record walk finds, asking per entry and per candidate, not per record", () => {
    const pages = walk(1000, 5);
    const found = pages.flatMap((p) => p.results);
    expect(found).toEqual(expected());
    expect(found).toContain("scim-new");
    expect(found).toContain(sub(100));
    expect(found).not.toContain(sub(2501));
    expect(found).not.toContain(sub(7));
    // Each page: at most 3 entries and the candidates it looked at (5 results, plus the overlay's viewer).
    for (const p of pages) expect(p.questions).toBeLessThanOrEqual(3 + 5 + 1);
    const asked = pages.reduce((n, p) => n + p.questions, 0);
    expect(asked).toBeLessThan(60);
    expect(asked * 100).toBeLessThan(N);
  });

  it("one page of a large limit asks about the entries and the candidates only", () => {
    const [page, ...rest] = walk(1000, 100);
    expect(rest).toEqual([]);
    expect(page!.results).toEqual(expected());
    // 3 entries, the 12 file editors (user-2501 is the overlay's), the 4 overlay users.
    expect(page!.questions).toBe(3 + 12 + 4);
  });

  it("walks record by record when the entries outnumber half the budget, and ends with the same users", () => {
    const pages = walk(4, 5);
    expect(pages.flatMap((p) => p.results)).toEqual(expected());
    for (const p of pages) expect(p.questions).toBeLessThanOrEqual(4);
  });

  it("keeps the index with the snapshot: built once", () => {
    const { entries } = directory();
    expect(entries.recordsByEntry()).toBe(entries.recordsByEntry());
    expect(entries.recordsByEntry().get(EDITOR)!.length).toBe(12 + 1);
  });
});
