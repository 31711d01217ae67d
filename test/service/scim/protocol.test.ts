/**
 * The SCIM protocol as RFC 7644 writes it: the bearer token, filters (userName without case, externalId,
 * displayName), paging, attributes and excludedAttributes, ETags and If-Match, PUT, uniqueness, errors with
 * status/scimType/detail, the bounds on bodies, operations and pages, and the discovery endpoints.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ResourceTable } from "../../../src/service/scim/resource-table.js";
import { patchOp, scimRequest, serveScim, user, SCIM_JSON, type ScimService } from "./support.js";

let svc: ScimService;
const ids: string[] = [];

beforeAll(async () => {
  svc = await serveScim(["--scim-max-page-size", "3", "--scim-max-operations", "4", "--scim-max-body-bytes", "4096"]);
  for (let i = 0; i < 5; i++) {
    const r = await svc.scim("POST", "/Users", user(`User${i}@School.example`, `ext-${i}`));
    ids.push(r.body.id);
  }
});
afterAll(() => svc.stop());

describe("authentication", () => {
  it.each([
    ["no header", {}],
    ["another token", { authorization: "Bearer not-the-token" }],
    ["basic", { authorization: "Basic dXNlcjpwYXNz" }],
  ])("%s: 401 with a SCIM error and WWW-Authenticate", async (_, headers) => {
    const res = await fetch(`${svc.url}/scim/v2/Users`, { headers });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
    const body = (await res.json()) as { schemas: string[]; status: string };
    expect(body).toMatchObject({ schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"], status: "401" });
  });

  it("a new token in the file replaces the old one", async () => {
    writeFileSync(join(svc.dir, "scim-token"), "rotated-token-42\n");
    expect(
      (await scimRequest(svc.url, "GET", "/Users", undefined, { authorization: "Bearer rotated-token-42" })).status,
    ).toBe(200);
    expect((await svc.scim("GET", "/Users")).status).toBe(401);
    writeFileSync(join(svc.dir, "scim-token"), `${"scim-test-token-0123456789"}\n`);
    expect((await svc.scim("GET", "/Users")).status).toBe(200);
  });
});

describe("filters and paging", () => {
  it.each([
    ['userName eq "user3@school.example"', 1],
    ['userName eq "USER3@SCHOOL.EXAMPLE"', 1],
    ['externalId eq "ext-2"', 1],
    ['externalId eq "EXT-2"', 0],
    ['userName eq "nobody@school.example"', 0],
    ['userName sw "User1"', 1],
    ['externalId eq "ext-1" or externalId eq "ext-4"', 2],
  ])("filter %s finds %i", async (filter, n) => {
    const r = await svc.scim("GET", `/Users?filter=${encodeURIComponent(filter)}`);
    expect(r.status).toBe(200);
    expect(r.body.totalResults).toBe(n);
    expect(r.body.Resources).toHaveLength(n);
  });

  it.each([
    // [request, users read (parsed from their text)]
    [`/Users?filter=${encodeURIComponent('userName eq "USER3@school.example"')}`, 1],
    [`/Users?filter=${encodeURIComponent('externalId eq "ext-2"')}`, 1],
    ["/Users?startIndex=2&count=2", 2],
    [`/Users?filter=${encodeURIComponent('userName sw "user"')}`, 5],
  ])("%s reads %i user(s): an indexed filter or a page reads only what it answers", async (path, reads) => {
    const get = vi.spyOn(ResourceTable.prototype, "get");
    const values = vi.spyOn(ResourceTable.prototype, "values");
    try {
      const r = await svc.scim("GET", path);
      expect(r.status).toBe(200);
      const read = get.mock.calls.length + (values.mock.calls.length ? 5 : 0);
      expect(read).toBe(reads);
    } finally {
      get.mockRestore();
      values.mockRestore();
    }
  });

  it("a filter that does not parse is 400 invalidFilter", async () => {
    const r = await svc.scim("GET", `/Users?filter=${encodeURIComponent('userName eq "x" and (')}`);
    expect(r.status).toBe(400);
    expect(r.body.scimType).toBe("invalidFilter");
  });

  it("startIndex and count page; count is capped at the page size", async () => {
    const first = await svc.scim("GET", "/Users?startIndex=1&count=2");
    expect(first.body).toMatchObject({ totalResults: 5, startIndex: 1, itemsPerPage: 2 });
    const rest = await svc.scim("GET", "/Users?startIndex=3&count=100");
    expect(rest.body).toMatchObject({ totalResults: 5, startIndex: 3, itemsPerPage: 3 });
    const seen = [...first.body.Resources, ...rest.body.Resources].map((r) => r.id);
    expect(new Set(seen)).toEqual(new Set(ids));
    expect((await svc.scim("GET", "/Users?count=0")).body).toMatchObject({ totalResults: 5, itemsPerPage: 0 });
  });

  it("groups: displayName eq, and excludedAttributes=members", async () => {
    const g = await svc.scim("POST", "/Groups", { displayName: "Directeur jeune", members: [{ value: ids[0] }] });
    expect(g.status).toBe(201);
    const found = await svc.scim(
      "GET",
      `/Groups?filter=${encodeURIComponent('displayName eq "directeur JEUNE"')}&excludedAttributes=members`,
    );
    expect(found.body.totalResults).toBe(1);
    expect(found.body.Resources[0]).not.toHaveProperty("members");
    expect(found.body.Resources[0]).toMatchObject({ id: g.body.id, displayName: "Directeur jeune" });
    const only = await svc.scim("GET", `/Groups/${g.body.id}?attributes=displayName`);
    expect(Object.keys(only.body).sort()).toEqual(["displayName", "id", "meta", "schemas"]);
  });
});

describe("versions and preconditions", () => {
  it("each write moves meta.version; If-Match with an old version is 412, with the current one applies", async () => {
    const id = ids[4]!;
    const before = await svc.scim("GET", `/Users/${id}`);
    const v1 = before.body.meta.version;
    expect(before.headers.get("etag")).toBe(v1);
    const ok = await svc.scim("PATCH", `/Users/${id}`, patchOp({ op: "replace", path: "displayName", value: "Ada" }), {
      "if-match": v1,
    });
    expect(ok.status).toBe(200);
    const v2 = ok.body.meta.version;
    expect(v2).not.toBe(v1);
    const stale = await svc.scim("PUT", `/Users/${id}`, user("User4@School.example", "ext-4"), { "if-match": v1 });
    expect(stale.status).toBe(412);
    expect(stale.body.status).toBe("412");
    const star = await svc.scim("PUT", `/Users/${id}`, user("User4@School.example", "ext-4"), { "if-match": "*" });
    expect(star.status).toBe(200);
    expect(star.body).not.toHaveProperty("displayName");
    expect(star.body.meta.created).toBe(before.body.meta.created);
  });
});

describe("errors (RFC 7644 3.12)", () => {
  it.each([
    ["POST", "/Users", user("user1@school.example", "ext-new"), 409, "uniqueness"],
    ["POST", "/Users", user("new@school.example", "ext-1"), 409, "uniqueness"],
    ["POST", "/Users", { externalId: "x" }, 400, "invalidValue"],
    ["POST", "/Users", user("a@b.c", "e-a", { active: "maybe" }), 400, "invalidValue"],
    ["POST", "/Users", "{not json", 400, "invalidSyntax"],
    ["POST", "/Groups", { displayName: "G", members: [{ value: "no-such-id" }] }, 400, "invalidValue"],
    ["PATCH", "/Users/ID0", { Operations: [] }, 400, "invalidSyntax"],
    ["PATCH", "/Users/ID0", patchOp({ op: "move", path: "active" }), 400, "invalidSyntax"],
    ["PATCH", "/Users/ID0", patchOp({ op: "replace", path: "id", value: "x" }), 400, "mutability"],
    [
      "PATCH",
      "/Users/ID0",
      patchOp(...Array.from({ length: 5 }, () => ({ op: "replace", path: "active", value: true }))),
      413,
      undefined,
    ],
    ["PUT", "/Users/nope", user("a@b.c", "e"), 404, undefined],
    ["DELETE", "/Groups/nope", undefined, 404, undefined],
    ["POST", "/Bulk", {}, 501, undefined],
  ])("%s %s -> %i %s", async (method, path, body, status, scimType) => {
    const r = await svc.scim(method, path.replace("ID0", ids[0]!), body);
    expect(r.status).toBe(status);
    expect(r.headers.get("content-type")).toContain(SCIM_JSON);
    expect(r.body.schemas).toEqual(["urn:ietf:params:scim:api:messages:2.0:Error"]);
    expect(r.body.status).toBe(String(status));
    expect(r.body.detail).toEqual(expect.any(String));
    if (scimType) expect(r.body.scimType).toBe(scimType);
  });

  it("a body over --scim-max-body-bytes is 413 and nothing is created", async () => {
    const r = await svc.scim("POST", "/Users", user("big@school.example", "big", { displayName: "x".repeat(5000) }));
    expect(r.status).toBe(413);
    expect(
      (await svc.scim("GET", `/Users?filter=${encodeURIComponent('externalId eq "big"')}`)).body.totalResults,
    ).toBe(0);
  });
});

describe("discovery", () => {
  it("ServiceProviderConfig says what is supported", async () => {
    const r = await svc.scim("GET", "/ServiceProviderConfig");
    expect(r.body).toMatchObject({
      patch: { supported: true },
      bulk: { supported: false },
      filter: { supported: true, maxResults: 3 },
      etag: { supported: true },
      sort: { supported: true },
    });
  });

  it("ResourceTypes and Schemas list User and Group", async () => {
    const types = await svc.scim("GET", "/ResourceTypes");
    expect(types.body.Resources.map((r) => r.id)).toEqual(["User", "Group"]);
    expect((await svc.scim("GET", "/ResourceTypes/User")).body.endpoint).toBe("/Users");
    const schemas = await svc.scim("GET", "/Schemas");
    expect(schemas.body.Resources.map((r) => r.id)).toContain("urn:ietf:params:scim:schemas:core:2.0:User");
    const group = await svc.scim("GET", "/Schemas/urn:ietf:params:scim:schemas:core:2.0:Group");
    expect(group.status).toBe(200);
  });
});
