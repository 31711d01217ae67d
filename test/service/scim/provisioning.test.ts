/**
 * SCIM pushes change decisions at once: a user created, put in a group whose displayName is a role, given a
 * role through RFC 7643 `roles`, deactivated, reactivated and deleted, each visible to the next decision
 * without any reload of the directory.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { patchOp, serveScim, user, ALL_SYNCED_ROUTE, type ScimService } from "./support.js";

const SUB = "aaaaaaaa-0000-4000-8000-000000000001";
let svc: ScimService;

beforeAll(async () => {
  svc = await serveScim();
});
afterAll(() => svc.stop());

describe("SCIM provisioning changes decisions", () => {
  let userId = "";
  let groupId = "";

  it("a user unknown to the directory is not synced", async () => {
    expect(await svc.allowed(SUB, ALL_SYNCED_ROUTE)).toMatchObject({ allow: false, reason: "not_synced" });
  });

  it("POST /Users makes the user synced, without roles", async () => {
    const created = await svc.scim("POST", "/Users", user("ada@school.example", SUB));
    expect(created.status).toBe(201);
    userId = created.body.id;
    expect(created.headers.get("etag")).toBe(created.body.meta.version);
    expect(created.headers.get("location")).toMatch(new RegExp(`/scim/v2/Users/${userId}$`));
    expect(await svc.allowed(SUB, ALL_SYNCED_ROUTE)).toMatchObject({ allow: true });
    expect((await svc.allowed(SUB)).allow).toBe(false);
  });

  it("membership of a group named like a role grants that role", async () => {
    const group = await svc.scim("POST", "/Groups", {
      schemas: ["urn:ietf:params:scim:schemas:core:2.0:Group"],
      displayName: "Enseignant jeune",
      members: [],
    });
    expect(group.status).toBe(201);
    groupId = group.body.id;
    const added = await svc.scim(
      "PATCH",
      `/Groups/${groupId}`,
      patchOp({ op: "add", path: "members", value: [{ value: userId }] }),
    );
    expect(added.status).toBe(200);
    expect((await svc.allowed(SUB)).allow).toBe(true);
    const read = await svc.scim("GET", `/Users/${userId}`);
    expect(read.body.groups).toEqual([expect.objectContaining({ value: groupId, display: "Enseignant jeune" })]);
  });

  it("removing the member with a value filter takes the role away", async () => {
    const removed = await svc.scim(
      "PATCH",
      `/Groups/${groupId}`,
      patchOp({ op: "remove", path: `members[value eq "${userId}"]` }),
    );
    expect(removed.status).toBe(200);
    expect(removed.body.members).toEqual([]);
    expect((await svc.allowed(SUB)).allow).toBe(false);
  });

  it("the roles attribute grants a role too", async () => {
    const r = await svc.scim(
      "PATCH",
      `/Users/${userId}`,
      patchOp({ op: "add", path: "roles", value: [{ value: "enseignant_jeune" }] }),
    );
    expect(r.status).toBe(200);
    expect((await svc.allowed(SUB)).allow).toBe(true);
  });

  it("active false is not synced; active true again is", async () => {
    await svc.scim("PATCH", `/Users/${userId}`, patchOp({ op: "replace", path: "active", value: false }));
    expect(await svc.allowed(SUB, ALL_SYNCED_ROUTE)).toMatchObject({ allow: false, reason: "not_synced" });
    await svc.scim("PATCH", `/Users/${userId}`, patchOp({ op: "replace", value: { active: true } }));
    expect((await svc.allowed(SUB)).allow).toBe(true);
  });

  it("a role name no bundle resolves leaves the user not synced, counted in /ready", async () => {
    await svc.scim("PATCH", `/Users/${userId}`, patchOp({ op: "add", path: "roles", value: [{ value: "Astronaut" }] }));
    expect(await svc.allowed(SUB, ALL_SYNCED_ROUTE)).toMatchObject({ allow: false, reason: "not_synced" });
    const ready = (await (await fetch(`${svc.url}/ready`)).json()) as { directory: Record<string, unknown> };
    expect(ready.directory.rolesUnresolved).toBe(1);
    expect(ready.directory.provisioned).toEqual({ users: 1, synced: 1, rolesUnresolved: 1 });
    await svc.scim("PATCH", `/Users/${userId}`, patchOp({ op: "remove", path: 'roles[value eq "Astronaut"]' }));
    expect((await svc.allowed(SUB)).allow).toBe(true);
  });

  it("DELETE takes the user out, and out of its groups", async () => {
    await svc.scim("PATCH", `/Groups/${groupId}`, patchOp({ op: "add", path: "members", value: [{ value: userId }] }));
    const deleted = await svc.scim("DELETE", `/Users/${userId}`);
    expect(deleted.status).toBe(204);
    expect(await svc.allowed(SUB, ALL_SYNCED_ROUTE)).toMatchObject({ allow: false, reason: "not_synced" });
    expect((await svc.scim("GET", `/Users/${userId}`)).status).toBe(404);
    expect((await svc.scim("GET", `/Groups/${groupId}`)).body.members).toEqual([]);
  });
});
