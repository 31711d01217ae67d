/**
 * Who a grant change reaches (src/review/review-people.ts), on hand-made matrices: a person is listed under a
 * row only when their own access to one of its routes changes that way; lists are bounded, with the count.
 */
import { describe, expect, it } from "vitest";
import type { AccessMatrix, MatrixCell } from "../../src/review/compute-matrix.js";
import { SideAccess, peopleOf, peopleText, tenantPeopleOf, type Holder } from "../../src/review/review-people.js";

const ROLES = [
  { id: "teacher", label: "Teacher", aliases: ["Enseignant"] },
  { id: "head", label: "Head", aliases: [] },
];
const allow: MatrixCell = { allow: true, reason: "allowed" };
const deny: MatrixCell = { allow: false, reason: "role_not_allowed" };

/** One route; `allowed` lists the columns that may call it. */
function matrix(allowed: string[]): AccessMatrix {
  const columns = ["teacher", "head", "synced_without_role", "not_synced", "application"];
  const cells = Object.fromEntries(columns.map((c) => [c, allowed.includes(c) ? allow : deny]));
  return {
    revision: "r",
    roles: ROLES,
    columns,
    rows: [{ product: "p", api: "a", template: "/r", method: "GET", cells }],
    tenants: [],
    codes: [],
    probes: [],
  };
}

function holder(names: string[], people: string[], extra: Partial<Holder> = {}): Holder {
  return {
    flow: "accessCode",
    names,
    resolved: false,
    synced: true,
    tenantId: "A",
    people: { count: people.length, shown: people.slice(0, 5) },
    ...extra,
  };
}

describe("peopleOf", () => {
  const base = new SideAccess(matrix(["head"]), ROLES);
  const head = new SideAccess(matrix(["head", "teacher"]), ROLES);
  const row = { column: "teacher", change: "gained" as const, templates: ["/r"] };

  it("lists the holders of the role whose access changes, resolving directory names by the side's catalog", () => {
    const holders = [
      holder(["Enseignant"], ["sub t1", "sub t2"]),
      // Already allowed by another role: gains nothing.
      holder(["teacher", "head"], ["sub both"]),
      holder(["head"], ["sub h"]),
      // A name no side knows: not synced, not a teacher.
      holder(["Surveillant"], ["sub s"]),
    ];
    expect(peopleOf(holders, row, base, head)).toEqual({ count: 2, shown: ["sub t1", "sub t2"] });
  });

  it("takes a log's role ids as they are, and an application by its flow", () => {
    const seen = [
      holder(["teacher"], ["sub u-1"], { resolved: true }),
      holder([], ["client m"], { flow: "application", resolved: true }),
    ];
    expect(peopleOf(seen, row, base, head).shown).toEqual(["sub u-1"]);
    const apps = new SideAccess(matrix(["application"]), ROLES);
    const lost = { column: "application", change: "lost" as const, templates: ["/r"] };
    expect(peopleOf(seen, lost, apps, base).shown).toEqual(["client m"]);
  });

  it("a binding moved: the tenant's people of that flow who may call the route where the code is allowed", () => {
    const holders = [
      holder(["teacher"], ["sub a-teacher"]),
      holder(["head"], ["sub a-head"]),
      holder(["head"], ["sub b-head"], { tenantId: "B" }),
      holder([], ["client a"], { flow: "application", resolved: true }),
    ];
    const moved = { tenantId: "A", flow: "accessCode" as const, change: "gained" as const, templates: ["/r"] };
    expect(tenantPeopleOf(holders, moved, base, head).shown).toEqual(["sub a-teacher", "sub a-head"]);
    expect(tenantPeopleOf(holders, { ...moved, change: "lost" }, base, head).shown).toEqual(["sub a-head"]);
    expect(tenantPeopleOf(holders, { ...moved, flow: "application" }, base, head).shown).toEqual([]);
  });

  it("bounds the names and keeps the count", () => {
    const many = Array.from({ length: 12 }, (_, i) => `sub ${i}`);
    const list = peopleOf([holder(["teacher"], many)], row, base, head);
    expect(list.count).toBe(12);
    expect(peopleText(list)).toBe("sub 0, sub 1, sub 2, sub 3, sub 4 and 7 more");
  });
});
