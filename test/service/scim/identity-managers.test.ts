/**
 * The requests Entra ID and Okta are documented to send, as tables, against the real service: each row is one
 * request of the identity manager's provisioning cycle, its expected status, and the decision that follows for
 * the user (the sub is the user's externalId). Shapes written after Microsoft's "Tutorial: Develop and plan
 * provisioning for a SCIM endpoint" (request/response examples, and the known `"op": "Replace"` with
 * `"value": "False"`) and Okta's "SCIM 2.0 protocol reference" (filter with startIndex/count, a password
 * in the create, PATCH without path, member removal by value filter).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveScim, ALL_SYNCED_ROUTE, TEACHER_ROUTE, type ScimService, type ScimAnswer } from "./support.js";

const PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";

/** Ids the rows refer to ({user}, {group}), learnt from earlier answers. */
interface Ids {
  user: string;
  group: string;
}

interface Row {
  what: string;
  method: string;
  path: string;
  body?: unknown;
  status: number;
  /** The user's decisions after this request: on a route for every synced user, and on a teacher route. */
  synced: boolean;
  teacher: boolean;
  check?: (r: ScimAnswer) => void;
}

const ENTRA_SUB = "b9c1f0a4-5d1e-4f7e-9a34-0c6f1d2e3a41";
const entra: Row[] = [
  {
    what: "create user (enterprise extension, emails, roles [])",
    method: "POST",
    path: "/Users",
    body: {
      schemas: [USER, ENTERPRISE],
      externalId: ENTRA_SUB,
      userName: "Test_User_dfeef4c5@contoso.example",
      active: true,
      emails: [{ primary: true, type: "work", value: "Test_User_fd0ea19b@contoso.example" }],
      meta: { resourceType: "User" },
      name: { formatted: "givenName familyName", familyName: "familyName", givenName: "givenName" },
      roles: [],
    },
    status: 201,
    synced: true,
    teacher: false,
  },
  {
    what: "get user by userName filter",
    method: "GET",
    path: `/Users?filter=${encodeURIComponent('userName eq "Test_User_dfeef4c5@contoso.example"')}`,
    status: 200,
    synced: true,
    teacher: false,
    check: (r) => expect(r.body.totalResults).toBe(1),
  },
  {
    what: "get user by externalId filter, zero results",
    method: "GET",
    path: `/Users?filter=${encodeURIComponent('externalId eq "non-existent"')}`,
    status: 200,
    synced: true,
    teacher: false,
    check: (r) => expect(r.body).toMatchObject({ totalResults: 0, Resources: [] }),
  },
  {
    what: "update multi-valued and sub-attributes (capitalised Replace)",
    method: "PATCH",
    path: "/Users/{user}",
    body: {
      schemas: [PATCH],
      Operations: [
        { op: "Replace", path: 'emails[type eq "work"].value', value: "updatedEmail@contoso.example" },
        { op: "Replace", path: "name.familyName", value: "updatedFamilyName" },
      ],
    },
    status: 200,
    synced: true,
    teacher: false,
    check: (r) => {
      expect(r.body.emails).toEqual([expect.objectContaining({ type: "work", value: "updatedEmail@contoso.example" })]);
      expect(r.body.name).toMatchObject({ familyName: "updatedFamilyName" });
    },
  },
  {
    what: "create group (Microsoft's group schema)",
    method: "POST",
    path: "/Groups",
    body: {
      schemas: [GROUP, "http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group"],
      externalId: "8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159",
      displayName: "Enseignant jeune",
      meta: { resourceType: "Group" },
    },
    status: 201,
    synced: true,
    teacher: false,
  },
  {
    what: "get group by displayName, members excluded",
    method: "GET",
    path: `/Groups?excludedAttributes=members&filter=${encodeURIComponent('displayName eq "Enseignant jeune"')}`,
    status: 200,
    synced: true,
    teacher: false,
    check: (r) => {
      expect(r.body.totalResults).toBe(1);
      expect(r.body.Resources[0]).not.toHaveProperty("members");
    },
  },
  {
    what: "add member (named operation, Add, $ref null)",
    method: "PATCH",
    path: "/Groups/{group}",
    body: {
      schemas: [PATCH],
      Operations: [{ name: "addMember", op: "Add", path: "members", value: [{ $ref: null, value: "{user}" }] }],
    },
    status: 200,
    synced: true,
    teacher: true,
  },
  {
    what: "disable user: Replace active with the string False",
    method: "PATCH",
    path: "/Users/{user}",
    body: { schemas: [PATCH], Operations: [{ op: "Replace", path: "active", value: "False" }] },
    status: 200,
    synced: false,
    teacher: false,
    check: (r) => expect(r.body.active).toBe(false),
  },
  {
    what: "enable user: Replace active with the string True",
    method: "PATCH",
    path: "/Users/{user}",
    body: { schemas: [PATCH], Operations: [{ op: "Replace", path: "active", value: "True" }] },
    status: 200,
    synced: true,
    teacher: true,
  },
  {
    what: "remove member (Remove, path members, value list)",
    method: "PATCH",
    path: "/Groups/{group}",
    body: {
      schemas: [PATCH],
      Operations: [{ name: "removeMember", op: "Remove", path: "members", value: [{ $ref: null, value: "{user}" }] }],
    },
    status: 200,
    synced: true,
    teacher: false,
  },
  {
    what: "update group displayName without touching members",
    method: "PATCH",
    path: "/Groups/{group}",
    body: { schemas: [PATCH], Operations: [{ op: "Replace", path: "displayName", value: "Enseignant jeune" }] },
    status: 200,
    synced: true,
    teacher: false,
  },
  { what: "delete user", method: "DELETE", path: "/Users/{user}", status: 204, synced: false, teacher: false },
];

const OKTA_SUB = "00u1ab2cd3EF4gh5i6j7";
const okta: Row[] = [
  {
    what: "check the user exists (filter, startIndex, count)",
    method: "GET",
    path: `/Users?filter=${encodeURIComponent('userName eq "test.user@okta.local"')}&startIndex=1&count=100`,
    status: 200,
    synced: false,
    teacher: false,
    check: (r) => expect(r.body.totalResults).toBe(0),
  },
  {
    what: "create user with a password and an empty groups list",
    method: "POST",
    path: "/Users",
    body: {
      schemas: [USER],
      userName: "test.user@okta.local",
      externalId: OKTA_SUB,
      name: { givenName: "Test", familyName: "User" },
      emails: [{ primary: true, value: "test.user@okta.local", type: "work" }],
      displayName: "Test User",
      locale: "en-US",
      active: true,
      password: "1mz050nq",
      groups: [],
    },
    status: 201,
    synced: true,
    teacher: false,
    check: (r) => expect(r.body).not.toHaveProperty("password"),
  },
  {
    what: "create group with the user as member",
    method: "POST",
    path: "/Groups",
    body: {
      schemas: [GROUP],
      displayName: "Test SCIMv2",
      members: [{ value: "{user}", display: "test.user@okta.local" }],
    },
    status: 201,
    synced: false,
    teacher: false,
  },
  {
    what: "rename the group without path (id in the value, as Okta sends it): now a role",
    method: "PATCH",
    path: "/Groups/{group}",
    body: {
      schemas: [PATCH],
      Operations: [{ op: "replace", value: { id: "{group}", displayName: "Directeur jeune" } }],
    },
    status: 200,
    synced: true,
    teacher: true,
  },
  {
    what: "remove the member by value filter",
    method: "PATCH",
    path: "/Groups/{group}",
    body: { schemas: [PATCH], Operations: [{ op: "remove", path: 'members[value eq "{user}"]' }] },
    status: 200,
    synced: true,
    teacher: false,
  },
  {
    what: "add the member back",
    method: "PATCH",
    path: "/Groups/{group}",
    body: {
      schemas: [PATCH],
      Operations: [{ op: "add", path: "members", value: [{ value: "{user}", display: "test.user@okta.local" }] }],
    },
    status: 200,
    synced: true,
    teacher: true,
  },
  {
    what: "deactivate: PATCH replace without path",
    method: "PATCH",
    path: "/Users/{user}",
    body: { schemas: [PATCH], Operations: [{ op: "replace", value: { active: false } }] },
    status: 200,
    synced: false,
    teacher: false,
  },
  {
    what: "reactivate and update: PUT the whole user",
    method: "PUT",
    path: "/Users/{user}",
    body: {
      schemas: [USER],
      id: "{user}",
      userName: "test.user@okta.local",
      externalId: OKTA_SUB,
      name: { givenName: "Another", familyName: "User" },
      active: true,
      emails: [{ primary: true, value: "test.user@okta.local", type: "work" }],
      groups: [],
      meta: { resourceType: "User" },
    },
    status: 200,
    synced: true,
    teacher: true,
  },
  { what: "delete the group", method: "DELETE", path: "/Groups/{group}", status: 204, synced: true, teacher: false },
];

function fill(value: unknown, ids: Ids): unknown {
  const text = JSON.stringify(value).replaceAll("{user}", ids.user).replaceAll("{group}", ids.group);
  return JSON.parse(text);
}

describe.each([
  ["Entra ID", entra, ENTRA_SUB],
  ["Okta", okta, OKTA_SUB],
])("%s provisioning cycle", (_, rows, sub) => {
  let svc: ScimService;
  const ids: Ids = { user: "", group: "" };
  beforeAll(async () => {
    svc = await serveScim();
  });
  afterAll(() => svc.stop());

  it.each(rows)("$what", async (row) => {
    const path = fill(row.path, ids) as string;
    const r = await svc.scim(row.method, path, row.body === undefined ? undefined : fill(row.body, ids));
    expect({ status: r.status, body: r.body }).toMatchObject({ status: row.status });
    if (row.method === "POST" && path === "/Users") ids.user = r.body.id;
    if (row.method === "POST" && path === "/Groups") ids.group = r.body.id;
    row.check?.(r);
    expect((await svc.allowed(sub, ALL_SYNCED_ROUTE)).allow).toBe(row.synced);
    expect((await svc.allowed(sub, TEACHER_ROUTE)).allow).toBe(row.teacher);
  });
});
