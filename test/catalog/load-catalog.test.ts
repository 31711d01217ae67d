import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadCatalog, DataError, routeIndex, tenantIndex } from "../../src/catalog/index.js";
import { PROJECT_ROOT } from "../../src/toolchain/project-root.js";
import { scratchProject } from "../support/cli.js";
import { TENANT_A } from "../support/sample.js";

describe("loadCatalog", () => {
  it("loads the project's data", () => {
    const c = loadCatalog(join(PROJECT_ROOT, "data"));
    expect(c.routes).toHaveLength(29);
    expect(c.roles.map((r) => r.id)).toEqual([
      "enseignant_jeune",
      "directeur_jeune",
      "intervenant_jeune",
      "eleve_jeune",
      "parent_eleve_jeune",
      "enseignant_adulte",
      "directeur_adulte",
      "eleve_adulte",
    ]);
    expect(c.roles.find((r) => r.id === "parent_eleve_jeune")?.aliases).toContain("Parent de l'élève jeune");
  });

  /** The data files as the edits below see them: each edit breaks one on purpose (a field removed or added). */
  type Doc = {
    roles: { label: string; aliases: string[]; colour?: string }[];
    routes: { template: string; allowed: string[]; methods?: string[]; method?: string }[];
    tenants: { codeOrganisme: string[] }[];
  };
  type Edit = (doc: Doc) => void;
  const broken: [string, string, Edit | string, RegExp][] = [
    [
      "unknown role in a route",
      "routes",
      (d) => (d.routes[3]!.allowed[1] = "directeur"),
      /routes\.json:\d+: routes\[3\]\.allowed\[1\]: unknown role "directeur"/,
    ],
    [
      "missing field",
      "routes",
      (d) => Reflect.deleteProperty(d.routes[0]!, "template"),
      /routes\.json:\d+: routes\[0\]: missing field "template"/,
    ],
    [
      "unknown field",
      "roles",
      (d) => (d.roles[2]!.colour = "red"),
      /roles\.json:\d+: roles\[2\]: unknown field "colour"/,
    ],
    [
      "bad template",
      "routes",
      (d) => (d.routes[5]!.template = "/v2//x"),
      /routes\.json:\d+: routes\[5\]\.template: empty segment at character 5 \(\/\/ or a trailing \/\)$/,
    ],
    [
      "template with an unclosed {, in words (not the schema's regular expression)",
      "routes",
      (d) => (d.routes[5]!.template = "/v2/{codeOrganisme/x"),
      /routes\.json:\d+: routes\[5\]\.template: unclosed `\{` at character 5$/,
    ],
    [
      "template naming a parameter twice (the policy could never bind both)",
      "routes",
      (d) => (d.routes[5]!.template = "/v2/{codeOrganisme}/{codeOrganisme}"),
      /routes\.json:\d+: routes\[5\]\.template: parameter \{codeOrganisme\} appears twice \(characters 5 and 21\)/,
    ],
    [
      "mistyped role id: the nearest id",
      "routes",
      (d) => (d.routes[3]!.allowed[0] = "enseignant_jeun"),
      /routes\[3\]\.allowed\[0\]: unknown role "enseignant_jeun" \(did you mean "enseignant_jeune"\?\)$/,
    ],
    [
      "a role's label where its id belongs",
      "routes",
      (d) => (d.routes[3]!.allowed[0] = "Élève jeune"),
      /routes\[3\]\.allowed\[0\]: "Élève jeune" is the name of role eleve_jeune: write its id "eleve_jeune"$/,
    ],
    ["missing file", "roles", () => undefined, /^not found: \S+\/data\/roles\.json$/],
    [
      "duplicate template",
      "routes",
      (d) => (d.routes[1]!.template = d.routes[0]!.template),
      new RegExp(
        String.raw`routes\.json:\d+: routes\[1\]\.template: duplicates routes\[0\]: both answer GET on ` +
          String.raw`\S+ \(an entry without ` +
          String.raw`"methods" answers GET\)`,
      ),
    ],
    [
      "one method of one template in two entries: both named",
      "routes",
      (d) => {
        d.routes[1]!.template = d.routes[0]!.template;
        d.routes[0]!.methods = ["POST", "GET"];
        d.routes[1]!.methods = ["PUT", "GET"];
      },
      new RegExp(
        String.raw`routes\.json:\d+: routes\[1\]\.methods\[1\]: duplicates routes\[0\]: both answer GET on ` +
          String.raw`\/v2\/\{codeOrganisme\}\/elevesJeunes\/\{idEleveJeune\}\/absences; one entry per method of a ` +
          String.raw`route$`,
      ),
    ],
    [
      "entries of one route spelling its template differently",
      "routes",
      (d) => {
        d.routes[1]!.template = d.routes[0]!.template.replace("{idEleveJeune}", "{id}");
        d.routes[1]!.methods = ["POST"];
      },
      new RegExp(
        String.raw`routes\[1\]\.template: duplicates routes\[0\] \(same literals and parameter positions ` +
          String.raw`as \S+\): entries of ` +
          String.raw`one route spell its template the same way$`,
      ),
    ],
    [
      "the singular field: the plural named",
      "routes",
      (d) => (d.routes[2]!.method = "POST"),
      /routes\.json:\d+: routes\[2\]: unknown field "method" \(did you mean "methods"\?\)$/,
    ],
    [
      "a lower-case method",
      "routes",
      (d) => (d.routes[2]!.methods = ["GET", "post"]),
      /routes\.json:\d+: routes\[2\]\.methods\[1\]: method names are upper-case: write "POST"$/,
    ],
    [
      "a mistyped method",
      "routes",
      (d) => (d.routes[2]!.methods = ["DELTE"]),
      /routes\.json:\d+: routes\[2\]\.methods\[0\]: unknown method "DELTE" \(did you mean "DELETE"\?\)$/,
    ],
    [
      "a method no route names",
      "routes",
      (d) => (d.routes[2]!.methods = ["CONNECT"]),
      new RegExp(
        String.raw`routes\[2\]\.methods\[0\]: unknown method "CONNECT" \(a route names GET, HEAD, POST, ` +
          String.raw`PUT, PATCH, DELETE, ` +
          String.raw`OPTIONS\)$`,
      ),
    ],
    [
      "no methods",
      "routes",
      (d) => (d.routes[2]!.methods = []),
      /routes\[2\]\.methods: must NOT have fewer than 1 items/,
    ],
    [
      "a method twice",
      "routes",
      (d) => (d.routes[2]!.methods = ["PUT", "PUT"]),
      /routes\[2\]\.methods: must NOT have duplicate items/,
    ],
    [
      "decomposed template",
      "routes",
      (d) => (d.routes[11]!.template = "/v2/{codeOrganisme}/ba\u0302timents"),
      /routes\[11\]\.template: must be in Unicode NFC/,
    ],
    [
      "label naming two roles",
      "roles",
      (d) => d.roles[1]!.aliases.push("Enseignant jeune"),
      new RegExp(
        String.raw`roles\.json:\d+: roles\[1\]\.aliases\[0\]: "Enseignant jeune" of role directeur_jeune ` +
          String.raw`matches ` +
          String.raw`roles\[0\]\.label "Enseignant jeune" of role enseignant_jeune`,
      ),
    ],
    // Names that differ only in what the resolver ignores (case, spacing, Unicode form) are one name.
    [
      "alias naming another role in capitals",
      "roles",
      (d) => d.roles[1]!.aliases.push("ENSEIGNANT JEUNE"),
      new RegExp(
        String.raw`roles\.json:\d+: roles\[1\]\.aliases\[0\]: "ENSEIGNANT JEUNE" of role directeur_jeune ` +
          String.raw`matches ` +
          String.raw`roles\[0\]\.label "Enseignant jeune" of role enseignant_jeune`,
      ),
    ],
    [
      "alias naming another role with other spacing",
      "roles",
      (d) => d.roles[2]!.aliases.push(" enseignant\u00a0 jeune "),
      new RegExp(
        String.raw`roles\[2\]\.aliases\[0\]: .* of role intervenant_jeune matches roles\[0\]\.label ` +
          String.raw`"Enseignant jeune" of role ` +
          String.raw`enseignant_jeune`,
      ),
    ],
    [
      "alias naming another role in decomposed form",
      "roles",
      (d) => d.roles[5]!.aliases.push("E\u0301le\u0300ve jeune"),
      new RegExp(
        String.raw`roles\[5\]\.aliases\[0\]: .* of role enseignant_adulte matches roles\[3\]\.label ` +
          String.raw`"Élève jeune" of role ` +
          String.raw`eleve_jeune`,
      ),
    ],
    [
      "label equal to another role's id",
      "roles",
      (d) => (d.roles[3]!.label = "Directeur_Jeune"),
      /roles\[3\]\.label: "Directeur_Jeune" of role eleve_jeune matches roles\[1\]\.id "directeur_jeune"/,
    ],
    [
      "blank alias",
      "roles",
      (d) => d.roles[0]!.aliases.push("   "),
      /roles\.json:\d+: roles\[0\]\.aliases\[0\]: is blank/,
    ],
    [
      "alias with a comma",
      "roles",
      (d) => d.roles[0]!.aliases.push("Enseignant, jeune"),
      /roles\[0\]\.aliases\[0\]: "Enseignant, jeune" contains a comma/,
    ],
    [
      "code owned twice",
      "tenants",
      (d) => d.tenants[1]!.codeOrganisme.push("ORG001"),
      /tenants\.json:\d+: tenants\[1\]\.codeOrganisme\[1\]: code ORG001 already belongs/,
    ],
    [
      "code owned twice, other case",
      "tenants",
      (d) => d.tenants[1]!.codeOrganisme.push("org001"),
      new RegExp(
        `tenants\\.json:\\d+: tenants\\[1\\]\\.codeOrganisme\\[1\\]: code org001 already belongs to tenant ` +
          `${TENANT_A} as ORG001 \\(codes compare case-insensitively\\)`,
      ),
    ],
    [
      "code listed twice by its tenant, other case",
      "tenants",
      (d) => d.tenants[0]!.codeOrganisme.push("Org001"),
      /tenants\[0\]\.codeOrganisme\[1\]: code Org001 already belongs/,
    ],
    ...["ORG002.", "ORG;2", "\uff2fRG002", "ORG 002", "", "A".repeat(65)].map(
      (code): [string, string, Edit, RegExp] => [
        `code ${JSON.stringify(code)}`,
        "tenants",
        (d) => d.tenants[1]!.codeOrganisme.push(code),
        /tenants\.json:\d+: tenants\[1\]\.codeOrganisme\[1\]: must match pattern/,
      ],
    ),
    [
      "allowed neither list nor all_synced",
      "routes",
      (d) => Object.assign(d.routes[0]!, { allowed: "everyone" }),
      /routes\.json:\d+: routes\[0\]\.allowed/,
    ],
    [
      "malformed JSON",
      "tenants",
      '{\n  "tenants": [\n    { "tenant_id": "x", }\n  ]\n}\n',
      /tenants\.json:3:25: invalid JSON: unexpected "}" where a field name in double quotes was expected$/,
    ],
  ];

  it.each(broken)("names file and field for %s", (name, file, edit, message) => {
    const dir = scratchProject();
    const path = join(dir, "data", `${file}.json`);
    if (typeof edit === "string") writeFileSync(path, edit);
    else if (name === "missing file") rmSync(path);
    else {
      const doc = JSON.parse(readFileSync(path, "utf8")) as Doc;
      edit(doc);
      writeFileSync(path, JSON.stringify(doc, null, 2));
    }
    let error: unknown;
    try {
      loadCatalog(join(dir, "data"));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(DataError);
    expect((error as Error).message).toMatch(message);
  });
});

describe("a project's token choices (data/project.json claims and application_token)", () => {
  type Project = Record<string, unknown>;
  const load = (edit: (p: Project) => void) => {
    const dir = scratchProject();
    const path = join(dir, "data", "project.json");
    const doc = JSON.parse(readFileSync(path, "utf8")) as Project;
    edit(doc);
    writeFileSync(path, JSON.stringify(doc, null, 2));
    return loadCatalog(join(dir, "data"));
  };

  it("declares the spec's choices in the spec's project, and keeps what another project declares", () => {
    expect(loadCatalog(join(PROJECT_ROOT, "data")).project).toMatchObject({
      claims: { subject: "sub", tenant: "tenant_id" },
      application_token: { audience: "apiclients", scope: "apiclients" },
    });
    const own = load((p) => {
      p.claims = { subject: "uid", tenant: null };
      p.application_token = { audience: null, scope: "batch" };
      p.tenant_binding = null;
    });
    expect(own.project).toMatchObject({
      claims: { subject: "uid", tenant: null },
      application_token: { audience: null, scope: "batch" },
    });
    // Both may be left out: the policies and the service then read the spec's.
    const bare = load((p) => {
      delete p.claims;
      delete p.application_token;
    });
    expect(bare.project && "claims" in bare.project).toBe(false);
    expect(bare.project && "application_token" in bare.project).toBe(false);
  });

  const broken: [string, (p: Project) => void, RegExp][] = [
    [
      "a subject claim missing",
      (p) => (p.claims = { tenant: "org" }),
      /project\.json:\d+: claims: missing field "subject"/,
    ],
    [
      "a claim Portier reads for itself",
      (p) => (p.claims = { subject: "aud", tenant: "org" }),
      /project\.json:\d+: claims\.subject: "aud" is a claim Portier reads for itself: name another claim/,
    ],
    [
      "a claim name with a space",
      (p) => (p.claims = { subject: "uid", tenant: "the org" }),
      /claims\.tenant: "the org" is not a claim name: 1 to 128 printable ASCII, no spaces/,
    ],
    [
      "one claim for subject and tenant",
      (p) => (p.claims = { subject: "uid", tenant: "uid" }),
      /claims\.tenant: names the same claim as claims\.subject \("uid"\)/,
    ],
    [
      "a tenant binding without a tenant claim",
      (p) => (p.claims = { subject: "sub", tenant: null }),
      /project\.json:\d+: tenant_binding: binds a parameter to the caller's tenant, but claims\.tenant is null/,
    ],
    [
      "an unknown field of claims",
      (p) => (p.claims = { subject: "sub", tenant: "tenant_id", roles: "groups" }),
      /claims: unknown field "roles"/,
    ],
    [
      "an application audience that is no string",
      (p) => (p.application_token = { audience: 7, scope: null }),
      /project\.json:\d+: application_token\.audience: must be string/,
    ],
    [
      "an application scope with a space",
      (p) => (p.application_token = { audience: null, scope: "a b" }),
      /application_token\.scope: must match pattern/,
    ],
    [
      "an application token without scope",
      (p) => (p.application_token = { audience: "api" }),
      /application_token: missing field "scope"/,
    ],
  ];
  it.each(broken)("names the field for %s", (_name, edit, message) => {
    expect(() => load(edit)).toThrow(message);
  });
});

describe("the indexes the policy looks up", () => {
  const route = (template: string) => ({ product: "p", api: "a", template, allowed: "all_synced" as const });

  it("route index: per length, shapes most specific first, routes keyed by their lower-cased literals", () => {
    const index = routeIndex([route("/{x}/B"), route("/a/{y}"), route("/v1/Roles"), route("/v2/{c}/x/{d}")]);
    expect(index.shapes[2]).toEqual([
      { literals: [0, 1], routes: { "v1/roles": 2 }, mask: [false, false], specificity: "00" },
      { literals: [0], routes: { a: 1 }, mask: [false, true], specificity: "01" },
      { literals: [1], routes: { b: 0 }, mask: [true, false], specificity: "10" },
    ]);
    expect(index.shapes[4]).toEqual([
      { literals: [0, 2], routes: { "v2/x": 3 }, mask: [false, true, false, true], specificity: "0101" },
    ]);
    expect(index.patterns[3]?.parameters).toEqual([
      [1, "c"],
      [3, "d"],
    ]);
  });

  it("method tables: one per template, HEAD following GET unless an entry names HEAD", () => {
    const entry = (template: string, methods?: string[]) => ({ ...route(template), ...(methods ? { methods } : {}) });
    const index = routeIndex([
      entry("/a"),
      entry("/b", ["POST"]),
      entry("/b", ["GET", "PUT"]),
      entry("/c", ["GET"]),
      entry("/c", ["HEAD"]),
      entry("/d", ["DELETE"]),
    ]);
    expect(index.shapes[1]?.[0]?.routes).toEqual({ a: 0, b: 1, c: 3, d: 5 });
    expect(index.by_key).toEqual({ a: 0, b: 1, c: 3, d: 5 });
    expect(index.methods).toEqual([
      { GET: 0, HEAD: 0 },
      { POST: 1, GET: 2, PUT: 2, HEAD: 2 },
      { POST: 1, GET: 2, PUT: 2, HEAD: 2 },
      { GET: 3, HEAD: 4 },
      { GET: 3, HEAD: 4 },
      { DELETE: 5 },
    ]);
  });

  it("tenant index: owners by lower-cased code, spellings as listed, listed tenants; __proto__ is a plain key", () => {
    const index = tenantIndex([
      { tenant_id: "t1", codeOrganisme: ["ORG1", "__proto__"] },
      { tenant_id: "__proto__", codeOrganisme: ["Org2"] },
    ]);
    // JSON text: in an object literal "__proto__" would set the prototype instead of naming a key.
    expect(JSON.stringify(index)).toBe(
      '{"owners":{"org1":"t1","__proto__":"t1","org2":"__proto__"},' +
        '"spellings":{"ORG1":true,"__proto__":true,"Org2":true},"listed":{"t1":true,"__proto__":true}}',
    );
  });
});
