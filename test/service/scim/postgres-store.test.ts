/**
 * The PostgreSQL store against a real PostgreSQL (the test's own cluster on loopback): a replica that catches up
 * with many steps at once applies them in revision order, across 9 -> 10 and 99 -> 100 (a text ordering of
 * the revisions would apply 10 before 9, and the state would then skip 2 to 9 as already applied: changes lost);
 * and a snapshot loaded at start holds every resource.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresStore } from "../../../src/service/scim/postgres-store.js";
import type { Step } from "../../../src/service/scim/scim-state.js";
import { postgresAvailable, startPostgres, type TestPostgres } from "../../support/postgres.js";

const user = (i: number) => ({
  type: "User" as const,
  id: `u${i}`,
  resource: {
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
    id: `u${i}`,
    userName: `u${i}@school.example`,
    meta: { resourceType: "User" as const, created: "", lastModified: "", version: `W/"${i}"` },
  },
});

describe.skipIf(!postgresAvailable)("the PostgreSQL store", () => {
  let pg: TestPostgres;
  const stores: PostgresStore[] = [];
  beforeAll(async () => {
    pg = await startPostgres();
  }, 120_000);
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    pg?.destroy();
  });
  const store = () => {
    const s = new PostgresStore(pg.url, { checkSeconds: 3600 });
    stores.push(s);
    return s;
  };

  it("a replica catching up with 120 steps at once applies them in revision order", async () => {
    const writer = store();
    await writer.load(() => undefined);
    const reader = store();
    const applied: number[] = [];
    // Loaded, not following: the steps reach it only through the catch-up below, all in one batch.
    await reader.load((s: Step) => applied.push(s.rev));
    for (let i = 1; i <= 120; i++)
      await writer.write(i - 1, (slot) => slot.commit({ rev: slot.rev, changes: [user(i)] }));
    await reader.catchUp();
    expect(applied).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
    expect(reader.status()).toMatchObject({ revision: 120, lag: 0 });

    const late = store();
    const loaded = new Set<string>();
    await late.load((s: Step) => s.changes.forEach((c) => loaded.add(c.id)));
    expect(loaded.size).toBe(120);
    expect(late.status()).toMatchObject({ revision: 120 });
  });
});
