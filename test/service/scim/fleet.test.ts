/**
 * --scim-postgres-url: a fleet of replicas sharing the SCIM directory through a real PostgreSQL (the test's own
 * cluster on loopback). A change taken by one replica is seen by the other's decisions; concurrent writes on both
 * converge on the same revision; a replica started mid-stream loads the snapshot; with PostgreSQL stopped the
 * replicas keep deciding on what they have, refuse writes (503) and report it, then catch up once it is back.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeKeys, tempDir, until, type Keys } from "../helpers.js";
import { postgresAvailable, startPostgres, type TestPostgres } from "../../support/postgres.js";
import { patchOp, serveScim, user, ALL_SYNCED_ROUTE, type ScimService } from "./support.js";

const sub = (i: number) => `cccccccc-0000-4000-8000-${String(i).padStart(12, "0")}`;

describe.skipIf(!postgresAvailable)("SCIM through PostgreSQL", () => {
  let pg: TestPostgres;
  let keys: Keys;
  const replicas: ScimService[] = [];
  const replica = async () => {
    const r = await serveScim(["--scim-postgres-url", pg.url], tempDir(), keys);
    replicas.push(r);
    return r;
  };
  const ready = async (r: ScimService) =>
    (await (await fetch(`${r.url}/ready`)).json()) as {
      problems: string[];
      scim: { revision: number; users: number; store: { lag: number; connected: boolean; head: number } };
    };
  const synced = async (r: ScimService, s: string) => (await r.allowed(s, ALL_SYNCED_ROUTE)).allow;

  beforeAll(async () => {
    pg = await startPostgres();
    keys = await makeKeys();
  }, 120_000);
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    pg?.destroy();
  });

  let a: ScimService;
  let b: ScimService;

  it("a change taken by one replica changes the other's decisions", async () => {
    a = await replica();
    b = await replica();
    const created = await a.scim("POST", "/Users", user("one@school.example", sub(1)));
    expect(created.status).toBe(201);
    await until(() => synced(b, sub(1)), 5000, 10);
    const off = await b.scim(
      "PATCH",
      `/Users/${created.body.id}`,
      patchOp({ op: "replace", path: "active", value: false }),
    );
    expect(off.status).toBe(200);
    await until(async () => !(await synced(a, sub(1))), 5000, 10);
  });

  it("concurrent writes on both replicas converge on one revision", async () => {
    const writes = [];
    for (let i = 10; i < 40; i++)
      writes.push((i % 2 ? a : b).scim("POST", "/Users", user(`u${i}@school.example`, sub(i))));
    const answers = await Promise.all(writes);
    expect(answers.map((r) => r.status)).toEqual(answers.map(() => 201));
    const versions = new Set(answers.map((r) => r.body.meta.version));
    expect(versions.size).toBe(30);
    await until(async () => (await ready(a)).scim.revision === (await ready(b)).scim.revision, 5000, 20);
    const [ra, rb] = [await ready(a), await ready(b)];
    expect(ra.scim.users).toBe(31);
    expect(rb.scim.users).toBe(31);
    for (const i of [10, 25, 39]) expect(await synced(b, sub(i))).toBe(true);
  });

  it("a replica started mid-stream loads the snapshot and follows", async () => {
    const c = await replica();
    expect((await ready(c)).scim).toMatchObject({ users: 31, revision: (await ready(a)).scim.revision });
    expect(await synced(c, sub(20))).toBe(true);
    await a.scim("POST", "/Users", user("late@school.example", sub(50)));
    await until(() => synced(c, sub(50)), 5000, 10);
    await c.stop();
  });

  it(
    "PostgreSQL stopped: decisions go on, writes are " + "refused and reported; back: every replica catches up",
    async () => {
      pg.stop();
      expect(await synced(b, sub(20))).toBe(true);
      const refused = await a.scim("POST", "/Users", user("down@school.example", sub(60)));
      expect(refused.status).toBe(503);
      expect(refused.body.detail).not.toContain("postgres://");
      await until(async () => (await ready(b)).problems.some((p) => p.startsWith("scim: store")), 15_000, 100);
      pg.start();
      // The write that was refused is retried, as an identity manager does.
      await until(
        async () => (await a.scim("POST", "/Users", user("down@school.example", sub(60)))).status === 201,
        15_000,
        200,
      );
      await until(() => synced(b, sub(60)), 40_000, 50);
      const rb = await ready(b);
      expect(rb.scim.store).toMatchObject({ connected: true, lag: 0 });
      expect(rb.scim.revision).toBe((await ready(a)).scim.revision);
      expect(rb.problems.filter((p) => p.startsWith("scim"))).toEqual([]);
    },
    90_000,
  );
});
