/**
 * The AuthZEN Authorization API 1.0 endpoints on the spec's own project (data/, the sample tenants), served in this
 * process as `portier serve --authzen-pep-key-file FILE` serves them: the mapping (subject = directory record,
 * action = method, resource = template or path), the spec's transport rules (401 without credentials and no
 * decision, 400 for malformed bodies, X-Request-ID), the evaluations semantics and defaults, the search APIs and
 * their pagination, and discovery against the spec's required fields.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ADULT_STUDENT,
  RECORDS,
  machineToken,
  makeKeys,
  sampleServeArgs,
  serveInProcess,
  TEACHER,
  tempDir,
  type InProcessService,
  type Keys,
} from "../helpers.js";
import { TENANT_A } from "../../support/sample.js";

const KEY = "pep-key-0123456789abcdef";
const PDP = "https://pdp.example.com";
const ABSENCES = "/v2/{codeOrganisme}/elevesJeunes/{idEleveJeune}/absences";
const ADULTS = "/v2/{codeOrganisme}/elevesAdultes";

let keys: Keys;
let svc: InProcessService;
let keyFile: string;

beforeAll(async () => {
  keys = await makeKeys();
  keyFile = join(tempDir(), "pep.key");
  writeFileSync(keyFile, `${KEY}\n`);
  svc = await serveInProcess([
    ...sampleServeArgs(keys),
    "--authzen-pep-key-file",
    keyFile,
    "--authzen-pdp-id",
    PDP,
    "--authzen-max-batch",
    "30",
    "--authzen-max-page",
    "50",
  ]);
});
afterAll(() => svc?.stop());

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

/** A POST as the PEP to the suite's service, or to the service at `base`. */
async function post(
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
  base: string = svc.url,
): Promise<Answer> {
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

const ask = (sub: string, method: string, resource: string) => ({
  subject: { type: "user", id: sub },
  action: { name: method },
  resource: { type: "route", id: resource },
});

/** The decision lines the service logged for one adapter. */
function decisionLines(adapter: string): Record<string, unknown>[] {
  return svc
    .output()
    .split("\n")
    .filter((l) => l.includes('"msg":"decision"'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.adapter === adapter);
}

describe("POST /access/v1/evaluation: the mapping", () => {
  // [name, request, decision, reason]
  const cases: [string, ReturnType<typeof ask>, boolean, string][] = [
    ["teacher, concrete path", ask(TEACHER, "GET", "/v2/ORG001/elevesJeunes/J1/absences"), true, "allowed"],
    ["teacher, template as the catalog writes it", ask(TEACHER, "GET", ABSENCES), true, "allowed"],
    ["teacher, HEAD", ask(TEACHER, "head", ABSENCES), true, "allowed"],
    ["adult student, template of another role", ask(ADULT_STUDENT, "GET", ABSENCES), false, "role_not_allowed"],
    ["adult student, own route", ask(ADULT_STUDENT, "GET", ADULTS + "/{idEleveAdulte}"), true, "allowed"],
    [
      "teacher, other tenant's code",
      ask(TEACHER, "GET", "/v2/ORG002/elevesJeunes/J1/absences"),
      false,
      "tenant_mismatch",
    ],
    ["unknown subject", ask("nobody", "GET", ABSENCES), false, "role_not_allowed"],
    ["unknown subject, all-synced route", ask("nobody", "GET", "/v1/roles"), false, "not_synced"],
    ["unknown route", ask(TEACHER, "GET", "/v9/nothing"), false, "route_unknown"],
    ["write method", ask(TEACHER, "POST", "/v1/roles"), false, "method_not_allowed"],
    ["dot segment", ask(TEACHER, "GET", "/v2/ORG001/x/../elevesJeunes"), false, "path_invalid"],
    ["encoded slash", ask(TEACHER, "GET", "/v2/ORG001%2Felevesjeunes"), false, "path_invalid"],
    ["a template-like id that is no template", ask(TEACHER, "GET", "/v2/{x}/elevesJeunes"), false, "path_invalid"],
  ];
  it.each(cases)("%s", async (_name, request, decision, reason) => {
    const a = await post("/access/v1/evaluation", request);
    expect(a.status).toBe(200);
    expect(a.body.decision).toBe(decision);
    expect(a.body.context).toMatchObject({ reason });
    expect((a.body.context as { decision_id: string }).decision_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("gives /decide's sentence and logs one decision with the subject's roles and the AuthZEN input", async () => {
    const a = await post("/access/v1/evaluation", {
      ...ask(TEACHER, "GET", ABSENCES),
      context: { time: "1985-10-26T01:22-07:00" },
    });
    const id = (a.body.context as { decision_id: string }).decision_id;
    expect((a.body.context as { message: string }).message).toBe(
      `user role enseignant_jeune is allowed on ${ABSENCES}`,
    );
    const line = decisionLines("authzen_evaluation").find((l) => l.decision_id === id)!;
    expect(line).toMatchObject({ sub: TEACHER, roles: ["enseignant_jeune"], allow: true, route: ABSENCES });
    expect((line.input as { authzen: unknown }).authzen).toEqual({
      subject: { type: "user", id: TEACHER },
      action: { name: "GET" },
      resource: { type: "route", id: ABSENCES },
      context: { time: "1985-10-26T01:22-07:00" },
    });
  });

  // Requests that cannot be asked: a deny with context.error, still a 200 and a recorded decision.
  it.each([
    ["subject type", { ...ask(TEACHER, "GET", ABSENCES), subject: { type: "group", id: TEACHER } }, "subject.type"],
    ["resource type", { ...ask(TEACHER, "GET", ABSENCES), resource: { type: "document", id: "1" } }, "resource.type"],
    ["action name", ask(TEACHER, "can_read", ABSENCES), "action.name"],
  ])("%s it does not know: decision false with context.error", async (_name, request, field) => {
    const a = await post("/access/v1/evaluation", request);
    expect(a.status).toBe(200);
    expect(a.body.decision).toBe(false);
    const ctx = a.body.context as { error: { status: number; message: string }; reason: string };
    expect(ctx.error.status).toBe(400);
    expect(ctx.error.message).toContain(field);
    expect(ctx.reason).toBe("request_invalid");
  });
});

describe("transport", () => {
  it("401 with WWW-Authenticate and no decision without a credential, or with another key", async () => {
    const before = decisionLines("authzen_evaluation").length;
    for (const authorization of [undefined, "Bearer wrong-key", `Basic ${KEY}`, KEY]) {
      const res = await fetch(`${svc.url}/access/v1/evaluation`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-request-id": "r-1",
          ...(authorization ? { authorization } : {}),
        },
        body: JSON.stringify(ask(TEACHER, "GET", ABSENCES)),
      });
      expect(res.status, String(authorization)).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer realm="portier-authzen"/);
      expect(res.headers.get("x-request-id")).toBe("r-1");
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).not.toHaveProperty("decision");
      expect(JSON.stringify(body)).not.toContain(KEY);
    }
    expect(decisionLines("authzen_evaluation").length).toBe(before);
    expect(svc.output()).not.toContain(KEY);
  });

  it("echoes X-Request-ID and records it", async () => {
    const a = await post("/access/v1/evaluation", ask(TEACHER, "GET", ABSENCES), { "x-request-id": "bfe9eb29-ab87" });
    expect(a.headers.get("x-request-id")).toBe("bfe9eb29-ab87");
    expect(a.headers.get("content-type")).toMatch(/^application\/json/);
    const id = (a.body.context as { decision_id: string }).decision_id;
    expect(decisionLines("authzen_evaluation").find((l) => l.decision_id === id)?.request_id).toBe("bfe9eb29-ab87");
  });

  // [endpoint, body, what the message names]
  const malformed: [string, unknown, string][] = [
    ["/access/v1/evaluation", "{not json", "body:"],
    ["/access/v1/evaluation", "[]", "body: must be a JSON object"],
    [
      "/access/v1/evaluation",
      { action: { name: "GET" }, resource: { type: "route", id: "/v1/roles" } },
      "body.subject",
    ],
    [
      "/access/v1/evaluation",
      { ...ask(TEACHER, "GET", "/v1/roles"), subject: { type: "user", id: 7 } },
      "body.subject.id",
    ],
    ["/access/v1/evaluation", { ...ask(TEACHER, "GET", "/v1/roles"), action: {} }, "body.action.name"],
    ["/access/v1/evaluation", { ...ask(TEACHER, "GET", "/v1/roles"), context: "now" }, "body.context"],
    ["/access/v1/evaluations", { evaluations: {} }, "body.evaluations"],
    [
      "/access/v1/evaluations",
      { evaluations: [{ subject: { type: "user", id: TEACHER } }] },
      "body.evaluations.0.action",
    ],
    [
      "/access/v1/evaluations",
      { ...ask(TEACHER, "GET", "/v1/roles"), evaluations: [{}], options: { evaluations_semantic: "first" } },
      "body.options.evaluations_semantic",
    ],
    [
      "/access/v1/evaluations",
      { ...ask(TEACHER, "GET", "/v1/roles"), evaluations: Array.from({ length: 31 }, () => ({})) },
      "--authzen-max-batch",
    ],
    [
      "/access/v1/search/resource",
      { subject: { type: "user", id: TEACHER }, resource: { type: "route" } },
      "body.action",
    ],
    [
      "/access/v1/search/subject",
      { subject: { id: "x" }, action: { name: "GET" }, resource: { type: "route", id: "/" } },
      "body.subject.type",
    ],
    [
      "/access/v1/search/action",
      { subject: { type: "user", id: TEACHER }, resource: { type: "route", id: "/v1/roles" }, page: { limit: -1 } },
      "body.page.limit",
    ],
    [
      "/access/v1/search/action",
      { subject: { type: "user", id: TEACHER }, resource: { type: "route", id: "/v1/roles" }, page: { token: "x" } },
      "body.page.token",
    ],
  ];
  it.each(malformed)("%s %j: 400 naming the field, no decision", async (endpoint, body, names) => {
    const a = await post(endpoint, body, { "x-request-id": "bad-1" });
    expect(a.status).toBe(400);
    expect(a.body).not.toHaveProperty("decision");
    expect(a.body).not.toHaveProperty("evaluations");
    expect(a.body.message).toContain(names);
    expect(a.headers.get("x-request-id")).toBe("bad-1");
  });

  it("413 for a body over --max-body-bytes, 415 for another content type, 405 for GET", async () => {
    const big = await post("/access/v1/evaluation", {
      ...ask(TEACHER, "GET", "/v1/roles"),
      context: { pad: "x".repeat(70_000) },
    });
    expect(big.status).toBe(413);
    const text = await post("/access/v1/evaluation", "x", { "content-type": "text/plain" });
    expect(text.status).toBe(415);
    const get = await fetch(`${svc.url}/access/v1/evaluation`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
  });
});

describe("POST /access/v1/evaluations", () => {
  // The spec's semantics example ("read" on three documents: true, false, true), on three routes of ours.
  const three = {
    subject: { type: "user", id: TEACHER },
    action: { name: "GET" },
    evaluations: [
      { resource: { type: "route", id: ABSENCES } },
      { resource: { type: "route", id: ADULTS } },
      { resource: { type: "route", id: "/v1/roles" } },
    ],
  };
  const semantics: [string | undefined, boolean[]][] = [
    [undefined, [true, false, true]],
    ["execute_all", [true, false, true]],
    ["deny_on_first_deny", [true, false]],
    ["permit_on_first_permit", [true]],
  ];
  it.each(semantics)("evaluations_semantic %s", async (semantic, decisions) => {
    const before = decisionLines("authzen_evaluations").length;
    const body = semantic ? { ...three, options: { evaluations_semantic: semantic, another_option: "value" } } : three;
    const a = await post("/access/v1/evaluations", body);
    expect(a.status).toBe(200);
    const answers = a.body.evaluations as { decision: boolean; context: { decision_id: string } }[];
    expect(answers.map((e) => e.decision)).toEqual(decisions);
    // One decision-log event per item evaluated, each with its own decision id.
    const lines = decisionLines("authzen_evaluations").slice(before);
    expect(lines.map((l) => l.decision_id)).toEqual(answers.map((e) => e.context.decision_id));
  });

  it("merges top-level defaults into each item, an item's own part winning (the spec's example)", async () => {
    const a = await post("/access/v1/evaluations", {
      subject: { type: "user", id: TEACHER },
      context: { time: "2024-05-31T15:22-07:00" },
      action: { name: "GET" },
      evaluations: [
        { resource: { type: "route", id: ABSENCES } },
        { resource: { type: "route", id: "/v1/roles" } },
        { action: { name: "DELETE" }, resource: { type: "route", id: "/v1/roles" } },
        { subject: { type: "user", id: ADULT_STUDENT }, resource: { type: "route", id: ABSENCES } },
      ],
    });
    const answers = a.body.evaluations as { decision: boolean; context: { reason: string } }[];
    expect(answers.map((e) => [e.decision, e.context.reason])).toEqual([
      [true, "allowed"],
      [true, "allowed"],
      [false, "method_not_allowed"],
      [false, "role_not_allowed"],
    ]);
  });

  it("answers in request order, errors per item in context.error", async () => {
    const a = await post("/access/v1/evaluations", {
      evaluations: [
        ask(TEACHER, "GET", "/v1/roles"),
        { ...ask(TEACHER, "GET", "/v1/roles"), resource: { type: "document", id: "1" } },
        ask(ADULT_STUDENT, "GET", ABSENCES),
      ],
    });
    const answers = a.body.evaluations as { decision: boolean; context: { error?: unknown } }[];
    expect(answers.map((e) => e.decision)).toEqual([true, false, false]);
    expect(answers[1]!.context.error).toMatchObject({ status: 400 });
    expect(answers[2]!.context.error).toBeUndefined();
  });

  it("without items is one evaluation", async () => {
    const a = await post("/access/v1/evaluations", { ...ask(TEACHER, "GET", "/v1/roles"), evaluations: [] });
    expect(a.body.decision).toBe(true);
  });
});

describe("search APIs", () => {
  const resourceSearch = (limit?: number, token?: string) => ({
    subject: { type: "user", id: TEACHER },
    action: { name: "GET" },
    resource: { type: "route" },
    ...(limit !== undefined || token !== undefined
      ? { page: { ...(limit ? { limit } : {}), ...(token ? { token } : {}) } }
      : {}),
  });

  it("resource search: the templates this subject may GET, each a true evaluation", async () => {
    const a = await post("/access/v1/search/resource", resourceSearch());
    const results = a.body.results as { type: string; id: string }[];
    expect(results).toContainEqual({ type: "route", id: ABSENCES });
    expect(results).not.toContainEqual({ type: "route", id: ADULTS });
    expect(a.body.page).toEqual({ next_token: "", count: results.length });
    for (const r of results)
      expect((await post("/access/v1/evaluation", ask(TEACHER, "GET", r.id))).body.decision).toBe(true);
  });

  it("pagination: pages of 2 give the whole result in order, and a changed query with a token is refused", async () => {
    const whole = (await post("/access/v1/search/resource", resourceSearch())).body.results;
    const pages: unknown[] = [];
    let token: string | undefined;
    for (let i = 0; i < 50; i++) {
      const a = await post("/access/v1/search/resource", resourceSearch(2, token));
      expect(a.status).toBe(200);
      const page = a.body.page as { next_token: string; count: number };
      expect(page.count).toBeLessThanOrEqual(2);
      pages.push(...(a.body.results as unknown[]));
      token = page.next_token;
      if (token === "") break;
    }
    expect(token).toBe("");
    expect(pages).toEqual(whole);
    const first = (await post("/access/v1/search/resource", resourceSearch(2))).body.page as { next_token: string };
    const changed = await post("/access/v1/search/resource", {
      ...resourceSearch(2, first.next_token),
      action: { name: "HEAD" },
    });
    expect(changed.status).toBe(400);
    expect(changed.body.message).toContain("query changed");
    const otherLimit = await post("/access/v1/search/resource", resourceSearch(3, first.next_token));
    expect(otherLimit.status).toBe(400);
  });

  it("subject search: the directory users who may call this method on this route", async () => {
    const teachers = await post("/access/v1/search/subject", {
      subject: { type: "user" },
      action: { name: "GET" },
      resource: { type: "route", id: ABSENCES },
    });
    expect(teachers.body.results).toEqual([{ type: "user", id: TEACHER }]);
    const everyone = await post("/access/v1/search/subject", {
      subject: { type: "identity" },
      action: { name: "GET" },
      resource: { type: "route", id: "/v1/roles" },
    });
    expect(everyone.body.results).toEqual([
      { type: "identity", id: TEACHER },
      { type: "identity", id: ADULT_STUDENT },
    ]);
    const paged = await post("/access/v1/search/subject", {
      subject: { type: "user" },
      action: { name: "GET" },
      resource: { type: "route", id: "/v1/roles" },
      page: { limit: 1 },
    });
    expect(paged.body.results).toEqual([{ type: "user", id: TEACHER }]);
    expect((paged.body.page as { next_token: string }).next_token).not.toBe("");
  });

  it("action search: the methods this subject may call on this route", async () => {
    const a = await post("/access/v1/search/action", {
      subject: { type: "user", id: TEACHER },
      resource: { type: "route", id: "/v1/roles" },
    });
    expect(a.body.results).toEqual([{ name: "GET" }, { name: "HEAD" }]);
    const none = await post("/access/v1/search/action", {
      subject: { type: "user", id: ADULT_STUDENT },
      resource: { type: "route", id: ABSENCES },
    });
    expect(none.body.results).toEqual([]);
  });

  it("a search for a type Portier does not have finds nothing", async () => {
    const a = await post("/access/v1/search/resource", { ...resourceSearch(), resource: { type: "document" } });
    expect(a.body).toEqual({ page: { next_token: "", count: 0 }, results: [] });
  });
});

describe("bounds and metrics", () => {
  it("a search looks at --authzen-search-budget candidates per request, continuing with a next_token", async () => {
    const s = await serveInProcess([
      ...sampleServeArgs(keys),
      "--authzen-pep-key-file",
      keyFile,
      "--authzen-search-budget",
      "1",
    ]);
    try {
      const ids: unknown[] = [];
      let token = "";
      let pages = 0;
      do {
        const answer = await post(
          "/access/v1/search/subject",
          {
            subject: { type: "user" },
            action: { name: "GET" },
            resource: { type: "route", id: "/v1/roles" },
            ...(token ? { page: { token } } : {}),
          },
          {},
          s.url,
        );
        const body = answer.body as { page: { next_token: string; count: number }; results: unknown[] };
        expect(body.page.count).toBeLessThanOrEqual(1);
        ids.push(...body.results);
        token = body.page.next_token;
        pages++;
      } while (token !== "" && pages < 10);
      expect(ids).toEqual([
        { type: "user", id: TEACHER },
        { type: "user", id: ADULT_STUDENT },
      ]);
      expect(pages).toBe(2);
    } finally {
      await s.stop();
    }
  });

  it("a subject search over 20,000 users makes a decision per role list and per candidate, not per user", async () => {
    // After the two sample users, 19,996 adult students, who may not read a young student's absences, and four
    // teachers, who may: the page asks about the two role lists, then only about the teachers.
    const records = [
      ...RECORDS,
      ...Array.from({ length: 20_000 }, (_, i) => ({
        sub: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
        tenant_id: TENANT_A,
        roles: [i % 5000 === 4999 ? "enseignant_jeune" : "Élève adulte"],
      })),
    ];
    const s = await serveInProcess([...sampleServeArgs(keys, records), "--authzen-pep-key-file", keyFile]);
    try {
      const decisions = async () => {
        const text = await (await fetch(`${s.url}/metrics`)).text();
        return [...text.matchAll(/^portier_decisions_total\{[^}]*adapter="authzen_search_subject"[^}]*\} (\d+)$/gm)]
          .map((m) => Number(m[1]))
          .reduce((a, b) => a + b, 0);
      };
      const answer = await post(
        "/access/v1/search/subject",
        {
          subject: { type: "user" },
          action: { name: "GET" },
          resource: { type: "route", id: ABSENCES },
          page: { limit: 3 },
        },
        {},
        s.url,
      );
      const body = answer.body as { page: { next_token: string }; results: { id: string }[] };
      expect(body.results.map((r) => r.id)).toEqual([
        TEACHER,
        "00000000-0000-4000-8000-000000004999",
        "00000000-0000-4000-8000-000000009999",
      ]);
      expect(body.page.next_token).not.toBe("");
      // Two role lists (teachers, adult students): two questions, then the three teachers found.
      expect(await decisions()).toBeLessThanOrEqual(2 + 3);
    } finally {
      await s.stop();
    }
  });

  it("counts decisions by endpoint (the adapter label)", async () => {
    await post("/access/v1/evaluation", ask(TEACHER, "GET", "/v1/roles"));
    const text = await (await fetch(`${svc.url}/metrics`)).text();
    for (const adapter of ["authzen_evaluation", "authzen_evaluations", "authzen_search_resource"])
      expect(text).toMatch(new RegExp(`portier_decisions_total\\{[^}]*adapter="${adapter}"`));
  });
});

describe("discovery", () => {
  it(
    "GET /.well-known/authzen-configuration: the spec's " + "required fields, absolute URLs under the identifier",
    async () => {
      const res = await fetch(`${svc.url}/.well-known/authzen-configuration`, { headers: { "x-request-id": "d-1" } });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
      const doc = (await res.json()) as Record<string, string>;
      // Required: policy_decision_point (identical to the identifier) and access_evaluation_endpoint.
      expect(doc.policy_decision_point).toBe(PDP);
      expect(doc.access_evaluation_endpoint).toBe(`${PDP}/access/v1/evaluation`);
      expect(doc).toEqual({
        policy_decision_point: PDP,
        access_evaluation_endpoint: `${PDP}/access/v1/evaluation`,
        access_evaluations_endpoint: `${PDP}/access/v1/evaluations`,
        search_subject_endpoint: `${PDP}/access/v1/search/subject`,
        search_resource_endpoint: `${PDP}/access/v1/search/resource`,
        search_action_endpoint: `${PDP}/access/v1/search/action`,
      });
      for (const url of Object.values(doc)) expect(new URL(url).protocol).toBe("https:");
      // Each endpoint is served at its path on this port.
      for (const [key, url] of Object.entries(doc)) {
        if (key === "policy_decision_point") continue;
        const r = await fetch(`${svc.url}${new URL(url).pathname}`, { method: "POST", body: "{}" });
        expect(r.status, key).toBe(401);
      }
    },
  );
});

describe("PEP credentials", () => {
  it("a new key in the file replaces the old one", async () => {
    const dir = tempDir();
    const file = join(dir, "pep.key");
    writeFileSync(file, "first-key");
    const s = await serveInProcess([...sampleServeArgs(keys), "--authzen-pep-key-file", file]);
    try {
      const call = (key: string) =>
        fetch(`${s.url}/access/v1/evaluation`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify(ask(TEACHER, "GET", "/v1/roles")),
        }).then((r) => r.status);
      expect(await call("first-key")).toBe(200);
      writeFileSync(file, "second-key-which-is-longer");
      expect(await call("first-key")).toBe(401);
      expect(await call("second-key-which-is-longer")).toBe(200);
      // A file that is not a key keeps the previous one.
      writeFileSync(file, "two words");
      expect(await call("second-key-which-is-longer")).toBe(200);
    } finally {
      await s.stop();
    }
  });

  it("an access token of a configured client; another client's is 403, a bad token 401", async () => {
    const s = await serveInProcess([...sampleServeArgs(keys), "--authzen-pep-clients", "gateway-1,gateway-2"]);
    try {
      const call = (token: string) =>
        fetch(`${s.url}/access/v1/evaluation`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify(ask(TEACHER, "GET", "/v1/roles")),
        });
      const ok = await call(await machineToken(keys, { client_id: "gateway-2" }));
      expect(ok.status).toBe(200);
      expect(((await ok.json()) as { decision: boolean }).decision).toBe(true);
      expect((await call(await machineToken(keys, { client_id: "someone" }))).status).toBe(403);
      const expired = await call(await machineToken(keys, { client_id: "gateway-1", exp: 1 }));
      expect(expired.status).toBe(401);
      expect(expired.headers.get("www-authenticate")).toContain('error="invalid_token"');
    } finally {
      await s.stop();
    }
  });

  it("off unless configured: 404", async () => {
    const s = await serveInProcess(sampleServeArgs(keys));
    try {
      const res = await fetch(`${s.url}/access/v1/evaluation`, { method: "POST", body: "{}" });
      expect(res.status).toBe(404);
      expect((await fetch(`${s.url}/.well-known/authzen-configuration`)).status).toBe(404);
    } finally {
      await s.stop();
    }
  });

  it("a key file that cannot be read stops the start, naming the option", async () => {
    await expect(
      serveInProcess([...sampleServeArgs(keys), "--authzen-pep-key-file", join(tempDir(), "missing.key")]),
    ).rejects.toThrow(/config\.authzenPepKeyFile/);
  });
});
