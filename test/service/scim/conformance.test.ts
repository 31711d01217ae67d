/**
 * The checks of the SCIM conformance suite scimverify (limosa-io/scimverify at commit a2e652c, run against
 * `portier serve` as docs/operating/scim.md "Conformance" says), written here as our own requests with the RFC
 * 7643/7644 section each rests on; each row names the suite's check. Where the suite expects what the RFC does not
 * say (a resource type named "Users", an error's status as a number, invalidSyntax for a missing required value),
 * the row asserts the RFC's answer and says why. Then the RFC 7644 list parameters that identity managers send:
 * sortBy/sortOrder, filters with and/co/sw compared without case, attributes and excludedAttributes with
 * sub-attributes and URNs, POST /.search, group members replaced by PATCH; and the answers RFC 7644 asks for
 * what is not implemented (/Me, Bulk, a filter on the discovery endpoints).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { patchOp, serveScim, user, type ScimBody, type ScimService } from "./support.js";

const USER = "urn:ietf:params:scim:schemas:core:2.0:User";
const GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group";
const LIST = "urn:ietf:params:scim:api:messages:2.0:ListResponse";
const ERROR = "urn:ietf:params:scim:api:messages:2.0:Error";
const ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
/** Matchers typed as values (expect.any is `any`). */
const ANY_OBJECT: unknown = expect.any(Object);
const ANY_STRING: unknown = expect.any(String);

interface Attribute {
  name: string;
  subAttributes?: Attribute[];
}

/** The names in `value` (an object, or a list of them) that `attributes` do not declare, with their paths. */
function undeclared(value: unknown, attributes: Attribute[], path = ""): string[] {
  if (Array.isArray(value)) return value.flatMap((v) => undeclared(v, attributes, path));
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([k, v]) => {
    const a = attributes.find((x) => x.name.toLowerCase() === k.toLowerCase());
    if (!a) return [`${path}${k}`];
    return a.subAttributes ? undeclared(v, a.subAttributes, `${path}${k}.`) : [];
  });
}

let svc: ScimService;
const ids: Record<string, string> = {};

beforeAll(async () => {
  svc = await serveScim();
  const people: [string, string, Record<string, unknown>][] = [
    ["carol@school.example", "ext-c", { name: { givenName: "Carol" }, emails: [{ value: "c@x.example" }] }],
    ["Alice@school.example", "ext-a", { name: { givenName: "alice" } }],
    ["bob@school.example", "ext-b", { emails: [{ value: "b2@x.example" }, { value: "a@x.example", primary: true }] }],
    ["dave@other.example", "ext-d", { active: false }],
  ];
  for (const [userName, externalId, extra] of people)
    ids[userName] = (await svc.scim("POST", "/Users", user(userName, externalId, extra))).body.id;
  for (const displayName of ["Enseignant jeune", "Directeur jeune"])
    ids[displayName] = (await svc.scim("POST", "/Groups", { schemas: [GROUP], displayName })).body.id;
});
afterAll(() => svc.stop());

const names = (r: { body: ScimBody }) => r.body.Resources.map((u) => u.userName);

describe("scimverify: base URL, /ResourceTypes, /Schemas", () => {
  it("'Authentication should be required for /Users': 401 without the token", async () => {
    expect((await fetch(`${svc.url}/scim/v2/Users`)).status).toBe(401);
  });

  it("'Should return a list of resource types' and 'Every resource ... valid resource type'", async () => {
    const r = await svc.scim("GET", "/ResourceTypes");
    expect(r.body.schemas).toEqual([LIST]);
    for (const t of r.body.Resources) {
      expect(t.schemas).toEqual(["urn:ietf:params:scim:schemas:core:2.0:ResourceType"]);
      expect(Object.keys(t)).toEqual(expect.arrayContaining(["id", "name", "description", "endpoint", "schema"]));
    }
  });

  it("'Should be able to retrieve a single resource type': User, as RFC 7643 8.6 (the suite wants Users)", async () => {
    const r = await svc.scim("GET", "/ResourceTypes/User");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: "User", name: "User", endpoint: "/Users", schema: USER });
  });

  // RFC 7643 section 7: a Schema is a resource, its `schemas` naming the Schema schema (examples of 8.7).
  it("'Every schema in the list should be valid': each carries schemas, id and name", async () => {
    const r = await svc.scim("GET", "/Schemas");
    expect(r.body.Resources.length).toBeGreaterThan(0);
    for (const s of r.body.Resources) {
      expect(s.schemas).toEqual(["urn:ietf:params:scim:schemas:core:2.0:Schema"]);
      expect(typeof s.name).toBe("string");
    }
  });

  it("'Should be able to retrieve a single schema'", async () => {
    const r = await svc.scim("GET", `/Schemas/${USER}`);
    expect(r.body).toMatchObject({ schemas: ["urn:ietf:params:scim:schemas:core:2.0:Schema"], id: USER, name: "User" });
    const userName = (r.body.attributes as { name: string; required: boolean }[]).find((a) => a.name === "userName");
    expect(userName?.required).toBe(true);
  });
});

describe("scimverify: /Users and /Groups", () => {
  // RFC 7644 section 8.1 registers application/scim+json with no parameters.
  it.each([
    ["'Retrieves a single user'", () => `/Users/${ids["carol@school.example"]}`],
    ["'Retrieves a single group'", () => `/Groups/${ids["Enseignant jeune"]}`],
    ["a list", () => "/Users"],
    ["'Handles retrieval of a non-existing user' (an error)", () => "/Users/9876543210123456"],
  ])("%s: Content-Type is application/scim+json, without parameters", async (_, path) => {
    const r = await svc.scim("GET", path());
    expect(r.headers.get("content-type")).toBe("application/scim+json");
  });

  it.each(["/Users/9876543210123456", "/Groups/9876543210123456"])("%s: 404 with the Error schema", async (path) => {
    const r = await svc.scim("GET", path);
    expect(r.status).toBe(404);
    expect(r.body.schemas).toEqual([ERROR]);
  });

  // The suite checks the top-level names; here sub-attributes too, on a user with every attribute Entra ID maps
  // by default (title, phone numbers, addresses, preferred language, the enterprise extension with a manager).
  it("'Retrieves a list of users': only attributes (and sub-attributes) the schemas declare", async () => {
    const rich = await svc.scim("POST", "/Users", {
      ...user("rich@contoso.example", "ext-rich"),
      schemas: [USER, ENTERPRISE],
      displayName: "Rich",
      nickName: "R",
      title: "Teacher",
      preferredLanguage: "fr-FR",
      locale: "fr-FR",
      timezone: "Europe/Paris",
      userType: "Employee",
      name: { formatted: "Ms R. Rich", familyName: "Rich", givenName: "R", honorificPrefix: "Ms" },
      phoneNumbers: [
        { value: "+33 1 23 45 67 89", type: "work" },
        { value: "+33 6", type: "mobile" },
      ],
      addresses: [{ type: "work", streetAddress: "1 rue", locality: "Paris", postalCode: "75001", country: "FR" }],
      [ENTERPRISE]: { department: "Maths", employeeNumber: "42", manager: { value: "boss-1" } },
    });
    expect(rich.status).toBe(201);
    const declared = new Map<string, Attribute[]>();
    for (const s of (await svc.scim("GET", "/Schemas")).body.Resources) declared.set(s.id, s.attributes as Attribute[]);
    const r = await svc.scim("GET", "/Users");
    expect(r.body.Resources.map((u) => u.userName)).toContain("rich@contoso.example");
    for (const u of r.body.Resources) {
      for (const [k, v] of Object.entries(u)) {
        if (["schemas", "id", "meta"].includes(k)) continue;
        if (declared.has(k)) expect(undeclared(v, declared.get(k)!), k).toEqual([]);
        else expect(undeclared({ [k]: v }, declared.get(USER)!)).toEqual([]);
      }
    }
    expect((await svc.scim("DELETE", `/Users/${rich.body.id}`)).status).toBe(204);
  });

  it("'Retrieves a list of groups': exactly the ListResponse attributes", async () => {
    const r = await svc.scim("GET", "/Groups");
    expect(Object.keys(r.body).sort()).toEqual(["Resources", "itemsPerPage", "schemas", "startIndex", "totalResults"]);
  });

  it.each(["Users", "Groups"])("'Paginates %s using startIndex' past the end: startIndex kept, none", async (t) => {
    const r = await svc.scim("GET", `/${t}?startIndex=20&count=5`);
    expect(r.body).toMatchObject({ startIndex: 20, itemsPerPage: 0, Resources: [] });
  });

  it("'Retrieves only userName attributes': attributes=userName keeps it with id, schemas and meta", async () => {
    const r = await svc.scim("GET", "/Users?attributes=userName");
    for (const u of r.body.Resources) expect(Object.keys(u).sort()).toEqual(["id", "meta", "schemas", "userName"]);
  });

  // The suite's "Alternative 2": core attributes inside an object keyed by the core schema's URN.
  it.each([
    ["User", "/Users", { userName: "urn.form@school.example", emails: [{ value: "u@x.example" }] }, "userName"],
    ["Group", "/Groups", { displayName: "Intervenant jeune" }, "displayName"],
  ] as const)("'Creates a new %s - Alternative 2': attributes under the core URN", async (type, path, attrs, key) => {
    const urn = type === "User" ? USER : GROUP;
    const r = await svc.scim("POST", path, { schemas: [urn], [urn]: attrs });
    expect(r.status).toBe(201);
    expect(r.body.schemas?.[0]).toBe(urn);
    expect(r.body[key]).toBe(attrs[key as keyof typeof attrs]);
    expect(r.body[urn]).toBeUndefined();
    expect((await svc.scim("DELETE", `${path}/${r.body.id}`)).status).toBe(204);
  });

  it("an attribute given at the top level and under the core URN differently is 400 naming it", async () => {
    const r = await svc.scim("POST", "/Users", { schemas: [USER], userName: "a@x.example", [USER]: { userName: "b" } });
    expect(r.status).toBe(400);
    expect(r.body.detail).toMatch(/^userName: /);
  });

  it("'Updates a user using PUT' with the answer read back, then PATCH replace userName, then DELETE", async () => {
    const created = await svc.scim("POST", "/Users", user("put.me@school.example", "ext-put"));
    const put = await svc.scim("PUT", `/Users/${created.body.id}`, { ...created.body, userName: "put.done@x.example" });
    expect(put.status).toBe(200);
    expect(put.body.userName).toBe("put.done@x.example");
    const patched = await svc.scim(
      "PATCH",
      `/Users/${created.body.id}`,
      patchOp({ op: "replace", path: "userName", value: "patched@x.example" }),
    );
    expect(patched.status).toBe(200);
    expect(patched.body.userName).toBe("patched@x.example");
    expect((await svc.scim("DELETE", `/Users/${created.body.id}`)).status).toBe(204);
  });

  // RFC 7644 3.12: status is "expressed as a JSON string"; Table 9 gives invalidValue for "a required value was
  // missing". The suite wants the number 400 and invalidSyntax.
  it("'Returns errors when creating an invalid group': 400, status \"400\", scimType invalidValue", async () => {
    const r = await svc.scim("POST", "/Groups", { schemas: [GROUP] });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ schemas: [ERROR], status: "400", scimType: "invalidValue" });
    expect(r.body.detail).toMatch(/^displayName: /);
  });

  it("'Assigns a user to a group': add members with value and display", async () => {
    const r = await svc.scim(
      "PATCH",
      `/Groups/${ids["Directeur jeune"]}`,
      patchOp({ op: "add", path: "members", value: [{ value: ids["bob@school.example"], display: "bob" }] }),
    );
    expect(r.status).toBe(200);
    expect(r.body.members?.map((m) => m.value)).toEqual([ids["bob@school.example"]]);
  });
});

describe("RFC 7644 3.4.2.3: sortBy and sortOrder", () => {
  it.each([
    ["userName", "", ["Alice@school.example", "bob@school.example", "carol@school.example", "dave@other.example"]],
    [
      "userName",
      "descending",
      ["dave@other.example", "carol@school.example", "bob@school.example", "Alice@school.example"],
    ],
    [
      "urn:ietf:params:scim:schemas:core:2.0:User:userName",
      "ASCENDING",
      ["Alice@school.example", "bob@school.example"],
    ],
    // name.givenName without case; the users without one last (ascending), first (descending)
    ["name.givenName", "ascending", ["Alice@school.example", "carol@school.example", "bob@school.example"]],
    ["name.givenName", "descending", ["dave@other.example", "bob@school.example", "carol@school.example"]],
    // a multi-valued attribute sorts by its primary value, else its first
    ["emails.value", "", ["bob@school.example", "carol@school.example"]],
    ["externalId", "", ["Alice@school.example", "bob@school.example", "carol@school.example"]],
  ])("sortBy=%s sortOrder=%s", async (sortBy, sortOrder, first) => {
    const order = sortOrder ? `&sortOrder=${sortOrder}` : "";
    const r = await svc.scim(
      "GET",
      `/Users?filter=${encodeURIComponent('userName ew ".example"')}&sortBy=${sortBy}${order}`,
    );
    expect(r.status).toBe(200);
    expect(names(r).slice(0, first.length)).toEqual(first);
  });

  it("sorts before paging: the second page continues the order", async () => {
    const r = await svc.scim("GET", "/Users?sortBy=userName&startIndex=2&count=2");
    expect(names(r)).toEqual(["bob@school.example", "carol@school.example"]);
  });

  it("sortBy=displayName sorts groups", async () => {
    const r = await svc.scim("GET", "/Groups?sortBy=displayName");
    expect(r.body.Resources.map((g) => g.displayName)).toEqual(["Directeur jeune", "Enseignant jeune"]);
  });

  it("a sortOrder other than ascending or descending is 400 invalidValue naming it", async () => {
    const r = await svc.scim("GET", "/Users?sortBy=userName&sortOrder=up");
    expect(r.status).toBe(400);
    expect(r.body.scimType).toBe("invalidValue");
    expect(r.body.detail).toMatch(/^sortOrder: /);
  });

  it("ServiceProviderConfig says sort is supported", async () => {
    expect((await svc.scim("GET", "/ServiceProviderConfig")).body.sort).toEqual({ supported: true });
  });
});

describe("RFC 7644 3.4.2.2: filters compare strings without case unless the attribute is case-exact", () => {
  it.each([
    ['userName sw "ALICE"', ["Alice@school.example"]],
    ['userName co "SCHOOL" and active eq true', ["carol@school.example", "Alice@school.example", "bob@school.example"]],
    ['userName eq "BOB@SCHOOL.EXAMPLE" and externalId eq "ext-b"', ["bob@school.example"]],
    [
      'name.givenName eq "ALICE" or emails[value ew "@X.EXAMPLE" and primary eq true]',
      ["Alice@school.example", "bob@school.example"],
    ],
    ['not (userName ew "school.example")', ["dave@other.example"]],
    // externalId and id are case-exact (RFC 7643 section 3.1)
    ['externalId sw "EXT-"', []],
    ['externalId sw "ext-" and userName sw "d"', ["dave@other.example"]],
  ])("%s", async (filter, expected) => {
    const r = await svc.scim("GET", `/Users?filter=${encodeURIComponent(filter)}`);
    expect(r.status).toBe(200);
    expect(names(r)).toEqual(expected);
  });
});

describe("RFC 7644 3.4.2.5: attributes and excludedAttributes in the notation of 3.10", () => {
  let id = "";
  beforeAll(async () => {
    const r = await svc.scim("POST", "/Users", {
      ...user("proj@school.example", "ext-proj"),
      schemas: [USER, ENTERPRISE],
      name: { givenName: "Pro", familyName: "Jection" },
      emails: [{ value: "p@x.example", type: "work", primary: true }],
      [ENTERPRISE]: { department: "Maths", costCenter: "7" },
    });
    id = r.body.id;
  });
  afterAll(async () => {
    await svc.scim("DELETE", `/Users/${id}`);
  });

  const always = { schemas: [USER, ENTERPRISE], id: ANY_STRING, meta: ANY_OBJECT };
  it.each([
    ["attributes", "name.givenName", { name: { givenName: "Pro" } }],
    ["attributes", "NAME.GIVENNAME,userName", { name: { givenName: "Pro" }, userName: "proj@school.example" }],
    ["attributes", `${USER}:userName`, { userName: "proj@school.example" }],
    ["attributes", "emails.value", { emails: [{ value: "p@x.example" }] }],
    ["attributes", `${ENTERPRISE}:department`, { [ENTERPRISE]: { department: "Maths" } }],
    ["attributes", ENTERPRISE, { [ENTERPRISE]: { department: "Maths", costCenter: "7" } }],
    ["attributes", "name,name.givenName", { name: { givenName: "Pro", familyName: "Jection" } }],
  ])("%s=%s", async (param, value, expected) => {
    const r = await svc.scim("GET", `/Users/${id}?${param}=${encodeURIComponent(value)}`);
    expect(r.body).toEqual({ ...always, ...expected });
  });

  it.each([
    ["name.givenName", (b: ScimBody) => expect(b.name).toEqual({ familyName: "Jection" })],
    [`${ENTERPRISE}:costCenter`, (b: ScimBody) => expect(b[ENTERPRISE]).toEqual({ department: "Maths" })],
    [`emails,${ENTERPRISE}`, (b: ScimBody) => expect([b.emails, b[ENTERPRISE]]).toEqual([undefined, undefined])],
    ["id,meta,schemas", (b: ScimBody) => expect(Object.keys(always).every((k) => k in b)).toBe(true)],
  ])("excludedAttributes=%s", async (value, check) => {
    const r = await svc.scim("GET", `/Users/${id}?excludedAttributes=${encodeURIComponent(value)}`);
    expect(r.body.userName).toBe("proj@school.example");
    check(r.body);
  });

  it("applies to each resource of a list", async () => {
    const filter = encodeURIComponent('userName eq "proj@school.example"');
    const r = await svc.scim("GET", `/Users?filter=${filter}&attributes=name.familyName`);
    expect(r.body.Resources).toEqual([{ ...always, name: { familyName: "Jection" } }]);
  });
});

describe("RFC 7644 3.4.3: POST /.search", () => {
  const search = (body: Record<string, unknown>) => ({
    schemas: ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"],
    ...body,
  });

  it("answers as the GET with the same parameters (lists of names, integers)", async () => {
    const body = search({
      filter: 'userName ew "school.example"',
      sortBy: "userName",
      sortOrder: "descending",
      attributes: ["userName", "name.givenName"],
      startIndex: 2,
      count: 2,
    });
    const r = await svc.scim("POST", "/Users/.search", body);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ schemas: [LIST], totalResults: 3, startIndex: 2, itemsPerPage: 2 });
    expect(r.body.Resources).toEqual([
      { schemas: [USER], id: ids["bob@school.example"], meta: ANY_OBJECT, userName: "bob@school.example" },
      {
        schemas: [USER],
        id: ids["Alice@school.example"],
        meta: ANY_OBJECT,
        userName: "Alice@school.example",
        name: { givenName: "alice" },
      },
    ]);
  });

  it("searches groups", async () => {
    const r = await svc.scim("POST", "/Groups/.search", search({ filter: 'displayName sw "directeur"' }));
    expect(r.body.Resources.map((g) => g.displayName)).toEqual(["Directeur jeune"]);
  });

  it.each([
    ["no SearchRequest schema", { filter: "userName pr" }, "invalidSyntax", /^schemas: /],
    ["count as a string", search({ count: "2" }), "invalidValue", /^count: must be an integer/],
    ["attributes as a string of numbers", search({ attributes: [1] }), "invalidValue", /^attributes: /],
    ["filter as an object", search({ filter: { op: "eq" } }), "invalidValue", /^filter: must be a string/],
    ["a filter that does not parse", search({ filter: "userName eq" }), "invalidFilter", /^filter: /],
  ])("%s: 400 %s", async (_, body, scimType, detail) => {
    const r = await svc.scim("POST", "/Users/.search", body);
    expect(r.status).toBe(400);
    expect(r.body.scimType).toBe(scimType);
    expect(r.body.detail).toMatch(detail);
  });
});

describe("what Portier does not implement, answered as RFC 7644 asks", () => {
  it.each([
    ["GET", "/Me"], // 3.11: 501 when /Me is not supported
    ["GET", "/me/x"],
    ["POST", "/Bulk"], // 3.7
    ["POST", "/.search"], // 3.4.3, across resource types
  ])("%s %s: 501 with a SCIM error", async (method, path) => {
    const r = await svc.scim(method, path, method === "POST" ? {} : undefined);
    expect(r.status).toBe(501);
    expect(r.body.schemas).toEqual([ERROR]);
  });

  // Section 4: the discovery endpoints are not filtered, and answer a filter 403.
  it.each(["/ServiceProviderConfig", "/ResourceTypes", "/ResourceTypes/User", "/Schemas", `/Schemas/${USER}`])(
    "GET %s?filter=...: 403; without a filter: 200",
    async (path) => {
      const r = await svc.scim("GET", `${path}?filter=${encodeURIComponent('name eq "User"')}`);
      expect(r.status).toBe(403);
      expect(r.body.schemas).toEqual([ERROR]);
      expect(r.body.detail).toMatch(/^filter: /);
      expect((await svc.scim("GET", path)).status).toBe(200);
    },
  );
});

describe("group members replaced by PATCH (RFC 7644 3.5.2.3)", () => {
  it("replace on members sets the whole list; replace with [] empties it", async () => {
    const g = ids["Enseignant jeune"]!;
    const both = [{ value: ids["carol@school.example"] }, { value: ids["Alice@school.example"] }];
    await svc.scim(
      "PATCH",
      `/Groups/${g}`,
      patchOp({ op: "add", path: "members", value: [{ value: ids["bob@school.example"] }] }),
    );
    const replaced = await svc.scim("PATCH", `/Groups/${g}`, patchOp({ op: "replace", path: "members", value: both }));
    expect(replaced.status).toBe(200);
    expect(replaced.body.members?.map((m) => m.value)).toEqual(both.map((m) => m.value));
    const carol = await svc.scim("GET", `/Users/${ids["carol@school.example"]}`);
    expect(carol.body.groups?.map((x) => x.display)).toEqual(["Enseignant jeune"]);
    const emptied = await svc.scim("PATCH", `/Groups/${g}`, patchOp({ op: "replace", path: "members", value: [] }));
    expect(emptied.body.members).toEqual([]);
  });
});
