/**
 * The guards and the mapping of the SCIM directory: a burst of deletions and deactivations beyond
 * --scim-max-deprovision-share is held (503, nothing applied, reported on /ready and in metrics); the sub and
 * tenant come from the configured attributes; a directory file and SCIM on one directory, where SCIM wins for
 * the users it holds and a reload of the file keeps its changes.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { tempDir, until, TENANT_A, TENANT_B } from "../helpers.js";
import { metricValue } from "../../support/metrics.js";
import { patchOp, serveScim, user, ALL_SYNCED_ROUTE, type ScimService } from "./support.js";

const sub = (i: number) => `dddddddd-0000-4000-8000-${String(i).padStart(12, "0")}`;
const stops: (() => Promise<void>)[] = [];
afterAll(() => Promise.all(stops.map((s) => s())));

async function serve(extra: string[], dir?: string): Promise<ScimService> {
  const svc = await serveScim(extra, dir);
  stops.push(() => svc.stop());
  return svc;
}

describe("the de-provisioning guard", () => {
  it("holds the deletions beyond the share within the window, applies nothing of them, and reports it", async () => {
    const svc = await serve(["--scim-max-deprovision-share", "0.2"]);
    const ids: string[] = [];
    for (let i = 0; i < 100; i++) ids.push((await svc.scim("POST", "/Users", user(`u${i}@x.example`, sub(i)))).body.id);
    const answers: number[] = [];
    // 20 of 100 may go within the window; the 21st is held, and so is each one after it.
    for (let i = 0; i < 25; i++) answers.push((await svc.scim("DELETE", `/Users/${ids[i]}`)).status);
    expect(answers.slice(0, 20)).toEqual(Array(20).fill(204));
    expect(answers.slice(20)).toEqual(Array(5).fill(503));
    // Deactivation counts as de-provisioning too.
    const off = await svc.scim("PATCH", `/Users/${ids[50]}`, patchOp({ op: "replace", path: "active", value: false }));
    expect(off.status).toBe(503);
    expect(off.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(off.body.detail).toMatch(/^held: this change would take 21 of 100 synced users out/);
    // Nothing of the held changes applied.
    expect((await svc.allowed(sub(20), ALL_SYNCED_ROUTE)).allow).toBe(true);
    expect((await svc.allowed(sub(50), ALL_SYNCED_ROUTE)).allow).toBe(true);
    expect((await svc.allowed(sub(19), ALL_SYNCED_ROUTE)).allow).toBe(false);
    const ready = (await (await fetch(`${svc.url}/ready`)).json()) as { ready: boolean; problems: string[] };
    expect(ready.ready).toBe(true);
    expect(ready.problems.join("\n")).toMatch(/scim: 6 change\(s\) held by the de-provisioning guard/);
    const metrics = await (await fetch(`${svc.url}/metrics`)).text();
    expect(metricValue(metrics, "portier_scim_held_total")).toBe(6);
    // Changes that take nobody out still apply.
    expect((await svc.scim("POST", "/Users", user("new@x.example", sub(200)))).status).toBe(201);
  });

  it("--scim-max-deprovision-share 1 lets a purge through", async () => {
    const svc = await serve(["--scim-max-deprovision-share", "1"]);
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) ids.push((await svc.scim("POST", "/Users", user(`u${i}@x.example`, sub(i)))).body.id);
    for (const id of ids) expect((await svc.scim("DELETE", `/Users/${id}`)).status).toBe(204);
  });
});

describe("the mapping", () => {
  const SCHOOL = "urn:example:school:2.0:User";
  const schoolUser = (userName: string, externalId: string, tenant: string) =>
    user(userName, externalId, {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:User", SCHOOL],
      [SCHOOL]: { tenant },
    });

  it.each(["userName", "id", "externalId"])("sub from %s, tenant_id from an extension's attribute", async (attr) => {
    const svc = await serve(["--scim-sub-attribute", attr, "--scim-tenant-attribute", `${SCHOOL}:tenant`]);
    const userName = "e1b2c3d4-0000-4000-8000-000000000abc";
    const externalId = "e1b2c3d4-0000-4000-8000-000000000def";
    const created = await svc.scim("POST", "/Users", schoolUser(userName, externalId, TENANT_A));
    expect(created.status).toBe(201);
    const s = attr === "userName" ? userName : attr === "id" ? created.body.id : externalId;
    expect((await svc.allowed(s, ALL_SYNCED_ROUTE)).allow).toBe(true);
    for (const other of [userName, externalId, created.body.id].filter((x) => x !== s))
      expect(await svc.allowed(other, ALL_SYNCED_ROUTE)).toMatchObject({ allow: false, reason: "not_synced" });
    // Filed under tenant B: a token of tenant A with the same sub is not that user.
    const other = await svc.scim("POST", "/Users", schoolUser(`b-${userName}`, `b-${externalId}`, TENANT_B));
    const s1 = attr === "userName" ? `b-${userName}` : attr === "id" ? other.body.id : `b-${externalId}`;
    expect(await svc.allowed(s1, ALL_SYNCED_ROUTE)).toMatchObject({ allow: false, reason: "not_synced" });
    // A user without the tenant attribute is not synced.
    const noTenant = await svc.scim("POST", "/Users", user("f0000000-0000-4000-8000-000000000001", "f1"));
    const s2 = attr === "userName" ? "f0000000-0000-4000-8000-000000000001" : attr === "id" ? noTenant.body.id : "f1";
    expect(await svc.allowed(s2, ALL_SYNCED_ROUTE)).toMatchObject({ allow: false, reason: "not_synced" });
  });

  it("a changed sub attribute moves the record: the old sub is not synced any more", async () => {
    const svc = await serve(["--scim-sub-attribute", "userName"]);
    const created = await svc.scim("POST", "/Users", user("a0000000-0000-4000-8000-000000000001", "x1"));
    await svc.scim(
      "PATCH",
      `/Users/${created.body.id}`,
      patchOp({ op: "replace", path: "userName", value: "a0000000-0000-4000-8000-000000000002" }),
    );
    expect((await svc.allowed("a0000000-0000-4000-8000-000000000001", ALL_SYNCED_ROUTE)).allow).toBe(false);
    expect((await svc.allowed("a0000000-0000-4000-8000-000000000002", ALL_SYNCED_ROUTE)).allow).toBe(true);
  });
});

describe("a directory file and SCIM on one directory", () => {
  it(
    "SCIM wins for the users it holds; the file's other " + "users stay; a reload of the file keeps SCIM's changes",
    async () => {
      const dir = tempDir();
      const file = join(dir, "users.json");
      const records = (teacherRole: string) => [
        { sub: sub(1), tenant_id: TENANT_A, roles: [teacherRole] },
        { sub: sub(2), tenant_id: TENANT_A, roles: ["enseignant_jeune"] },
        { sub: sub(3), tenant_id: TENANT_A, roles: [] },
      ];
      writeFileSync(file, JSON.stringify(records("enseignant_jeune")));
      const svc = await serve(["--directory", file, "--watch"], dir);
      expect((await svc.allowed(sub(1))).allow).toBe(true);
      // SCIM deactivates user 1 (listed by the file): SCIM wins.
      const u1 = await svc.scim("POST", "/Users", user("u1@x.example", sub(1), { active: false }));
      expect(u1.status).toBe(201);
      expect((await svc.allowed(sub(1), ALL_SYNCED_ROUTE)).allow).toBe(false);
      // SCIM adds user 4, unknown to the file.
      await svc.scim("POST", "/Users", user("u4@x.example", sub(4)));
      expect((await svc.allowed(sub(4), ALL_SYNCED_ROUTE)).allow).toBe(true);
      // The file is rewritten (user 3 gains the teacher role): the reload applies it, SCIM's users keep theirs.
      writeFileSync(
        file,
        JSON.stringify(
          records("enseignant_jeune").map((r, i) => (i === 2 ? { ...r, roles: ["enseignant_jeune"] } : r)),
        ),
      );
      await until(async () => (await svc.allowed(sub(3))).allow, 10_000, 50);
      expect((await svc.allowed(sub(1), ALL_SYNCED_ROUTE)).allow).toBe(false);
      expect((await svc.allowed(sub(4), ALL_SYNCED_ROUTE)).allow).toBe(true);
      const ready = (await (await fetch(`${svc.url}/ready`)).json()) as { directory: { size: number } };
      // 3 file records, user 1 masked, user 4 added.
      expect(ready.directory.size).toBe(3);
    },
  );
});
