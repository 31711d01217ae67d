/**
 * Group commit of the SCIM journal: steps handed in while a flush runs are written and flushed together, each
 * resolved only after its own flush; a step reaches the directory only once it is on disk, in order; a failed
 * write fails every step not yet flushed and takes them back out of the state, none having reached decisions.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Directory } from "../../../src/directory/index.js";
import { JournalStore } from "../../../src/service/scim/journal-store.js";
import { ScimService } from "../../../src/service/scim/scim-service.js";
import type { Step } from "../../../src/service/scim/scim-state.js";
import type { ScimStore, StoreStatus } from "../../../src/service/scim/store.js";
import { tempDir } from "../helpers.js";
import { TENANT_A } from "../../support/sample.js";
import { patchOp, user } from "./support.js";

const step = (rev: number): Step => ({
  rev,
  changes: [{ type: "User", id: `u${rev}`, resource: null }],
});

const options = {
  mapping: { sub: "externalId" as const, tenantAttribute: "organization", tenantId: TENANT_A },
  limits: { maxOperations: 100, maxResources: 1000 },
  guard: { maxShare: 1, windowMs: 60_000, floor: 10 },
};

async function service(store: ScimStore): Promise<{ scim: ScimService; directory: Directory }> {
  const directory = await Directory.provisioned();
  const scim = new ScimService(store, directory, options);
  await scim.open();
  return { scim, directory };
}

describe("the journal's group commit", () => {
  it("flushes the steps handed in during a flush together, in order, each resolved after its flush", async () => {
    const file = join(tempDir(), "scim.journal");
    const store = new JournalStore(file);
    await store.load(() => undefined);
    const order: number[] = [];
    // The first starts a flush at once; the nine handed in while it runs wait for the next one, together.
    const all = Array.from({ length: 10 }, (_, i) => store.append(step(i + 1)).then(() => order.push(i + 1)));
    await Promise.all(all);
    expect(order).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(store.status()).toMatchObject({ written: 10, flushes: 2 });
    await store.close();
    const replayed: number[] = [];
    const again = new JournalStore(file);
    await again.load((s) => replayed.push(s.rev));
    expect(replayed).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(readFileSync(file, "utf8").split("\n")).toHaveLength(11);
    await again.close();
  });

  it("a write that fails rejects its group, and a journal it cannot cut back refuses every later write", async () => {
    if (!existsSync("/dev/full")) return;
    // /dev/full takes the open, fails every write (ENOSPC), and cannot be truncated.
    const store = new JournalStore("/dev/full");
    await store.load(() => undefined);
    const first = [store.append(step(1)), store.append(step(2))];
    for (const p of first) await expect(p).rejects.toMatchObject({ code: "scim_journal_invalid" });
    await expect(store.append(step(3))).rejects.toThrow(/could not be cut back .*refused until a restart/);
    expect(store.status()).toMatchObject({ written: 0, flushes: 0 });
    expect(String(store.status().lastError)).toMatch(/a write failed \(ENOSPC\)/);
    await store.close();
  });
});

describe("SCIM writes through the journal", () => {
  it("concurrent writes are answered once on disk, reach the directory then, and survive a replay", async () => {
    const file = join(tempDir(), "scim.journal");
    const { scim, directory } = await service(new JournalStore(file));
    const subs = Array.from({ length: 20 }, (_, i) => `sub-${i}`);
    const created = subs.map((sub) =>
      scim.write({ kind: "create", type: "User", body: user(`${sub}@school.example`, sub) }),
    );
    // Planned at once (the state holds them, a later request plans against them), not yet decided on.
    expect(scim.state.users.size).toBe(20);
    expect(directory.lookup("sub-0")).toBeUndefined();
    const results = await Promise.all(created);
    expect(results.map((r) => r.status)).toEqual(subs.map(() => 201));
    expect(directory.lookup("sub-19")).toMatchObject({ tenant_id: TENANT_A });
    // A PATCH planned behind a create in the same group sees it.
    const group = scim.write({ kind: "create", type: "Group", body: { displayName: "Enseignant jeune" } });
    const gid = (await group).resource!.id;
    const members = results.slice(0, 5).map((r) => ({ value: r.resource!.id }));
    const patches = [
      scim.write({
        kind: "patch",
        type: "Group",
        id: gid,
        body: patchOp({ op: "add", path: "members", value: members }),
      }),
      scim.write({
        kind: "patch",
        type: "User",
        id: results[0]!.resource!.id,
        body: patchOp({ op: "replace", path: "active", value: false }),
      }),
    ];
    await Promise.all(patches);
    expect(directory.lookup("sub-0")).toBeUndefined();
    expect(directory.lookup("sub-1")?.names).toEqual(["Enseignant jeune"]);
    const flushes = scim.status().store.flushes as number;
    expect(flushes).toBeLessThan(23);
    expect(scim.status()).toMatchObject({ revision: 23, writes: 23 });
    await scim.close();

    const replay = await service(new JournalStore(file));
    expect(replay.scim.status()).toMatchObject({ revision: 23, users: 20, groups: 1, synced: 19 });
    expect(replay.directory.lookup("sub-1")?.names).toEqual(["Enseignant jeune"]);
    expect(replay.directory.lookup("sub-0")).toBeUndefined();
    await replay.scim.close();
  });

  it("a failed flush takes back every step not on disk, newest first; none reached the directory", async () => {
    // A journal that fails the flush of the steps after `failFrom`, then works again (a disk full for a moment).
    let failFrom = Infinity;
    const inner = new JournalStore(join(tempDir(), "scim.journal"));
    const store: ScimStore = {
      load: (apply, snapshot) => inner.load(apply, snapshot),
      write: (rev, run) => inner.write(rev, run),
      append: (s) => (s.rev >= failFrom ? Promise.reject(new Error("ENOSPC")) : inner.append(s)),
      status: (): StoreStatus => inner.status(),
      close: () => inner.close(),
    };
    const { scim, directory } = await service(store);
    const kept = await scim.write({ kind: "create", type: "User", body: user("kept@school.example", "kept") });
    const group = await scim.write({ kind: "create", type: "Group", body: { displayName: "Enseignant jeune" } });
    const before = { ...scim.status(), store: undefined };
    failFrom = 3;
    const failing = [
      scim.write({
        kind: "patch",
        type: "Group",
        id: group.resource!.id,
        body: patchOp({ op: "add", path: "members", value: [{ value: kept.resource!.id }] }),
      }),
      scim.write({ kind: "create", type: "User", body: user("lost@school.example", "lost") }),
      scim.write({ kind: "delete", type: "User", id: kept.resource!.id }),
    ];
    for (const p of failing) await expect(p).rejects.toThrow("ENOSPC");
    expect({ ...scim.status(), store: undefined }).toEqual(before);
    expect(scim.state.userIdByName("lost@school.example")).toBeUndefined();
    expect(scim.state.groupsOf(kept.resource!.id).size).toBe(0);
    expect(scim.state.users.get(kept.resource!.id)?.meta.version).toBe(kept.resource!.meta.version);
    expect(directory.lookup("kept")).toMatchObject({ names: [] });
    expect(directory.lookup("lost")).toBeUndefined();
    // The next write carries the next revision after the last durable one.
    failFrom = Infinity;
    const next = await scim.write({ kind: "create", type: "User", body: user("next@school.example", "next") });
    expect(next.resource!.meta.version).toBe('W/"3"');
    await scim.close();
  });
});
