/**
 * docs/openapi.json against the real service: every answer of `portier serve` (startService in this process,
 * its requests over an in-memory connection: inject.ts), for each endpoint and each kind of outcome, must be a
 * documented status of that path and method, with the
 * documented content type, a body valid against the documented schema (ajv, JSON Schema 2020-12 as
 * OpenAPI 3.1 uses it) and every documented header present. The request schema is the code's own.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DECIDE_REQUEST_SCHEMA, MAX_BATCH } from "../../src/service/http/decide-body.js";
import {
  EVALUATION_REQUEST_SCHEMA,
  EVALUATIONS_REQUEST_SCHEMA,
  SEARCH_REQUEST_SCHEMAS,
} from "../../src/service/authzen/parse-body.js";
import {
  ISSUER,
  PROJECT_ROOT,
  RECORDS,
  TEACHER,
  machineToken,
  makeKeys,
  tempDir,
  userToken,
  writeDirectory,
} from "./helpers.js";
import { serveInjected, type InjectedService } from "./inject.js";

type Doc = {
  openapi: string;
  paths: Record<string, Record<string, { responses: Record<string, Response> }>>;
  components: { schemas: Record<string, unknown>; headers: Record<string, unknown> };
};
type Response = { content?: Record<string, { schema: unknown }>; headers?: Record<string, unknown> };

const doc = JSON.parse(readFileSync(join(PROJECT_ROOT, "docs", "openapi.json"), "utf8")) as Doc;
const DOC_ID = "urn:portier:openapi";
const ajv = new Ajv2020({ strict: false, allErrors: true });
/** Document-relative refs (#/components/...) made absolute, so schemas compile on their own. */
function absolute<T>(schema: T): T {
  return JSON.parse(JSON.stringify(schema).replace(/"\$ref":"#\//g, `"$ref":"${DOC_ID}#/`)) as T;
}
ajv.addSchema({ $id: DOC_ID, components: absolute(doc.components) });

interface Seen {
  method: string;
  path: string;
  status: number;
  headers: Headers;
  text: string;
}

/** The documented operation for a concrete path: exact first, then templates ({x} matches the rest for /envoy). */
function operation(method: string, path: string) {
  const bare = path.split("?")[0] as string;
  const entry = Object.entries(doc.paths).find(([template]) => {
    if (template === bare) return true;
    if (!template.includes("{")) return false;
    const prefix = template.slice(0, template.indexOf("{"));
    return bare.startsWith(prefix) && bare.length > prefix.length;
  });
  return entry?.[1][method.toLowerCase()];
}

/** Everything wrong with one real answer, measured against the document. */
function problems(seen: Seen): string[] {
  const op = operation(seen.method, seen.path);
  if (!op) return [`${seen.method} ${seen.path}: no such operation in docs/openapi.json`];
  const response = op.responses[String(seen.status)];
  if (!response)
    return [
      `${seen.method} ${seen.path}: status ${seen.status} is not documented ` +
        `(documented: ${Object.keys(op.responses).join(", ")})`,
    ];
  const out: string[] = [];
  for (const name of Object.keys(response.headers ?? {})) {
    if (!seen.headers.has(name))
      out.push(`${seen.method} ${seen.path} ${seen.status}: documented header ${name} missing`);
  }
  const type = (seen.headers.get("content-type") ?? "").split(";")[0]?.trim() ?? "";
  const media = response.content?.[type];
  if (!media) return [...out, `${seen.method} ${seen.path} ${seen.status}: content type "${type}" is not documented`];
  const body: unknown = type === "application/json" ? JSON.parse(seen.text) : seen.text;
  const validate = ajv.compile(absolute(media.schema) as object);
  if (!validate(body))
    out.push(`${seen.method} ${seen.path} ${seen.status}: body does not match: ${ajv.errorsText(validate.errors)}`);
  return out;
}

let svc: InjectedService;
const tokens: Record<string, string> = {};
/** The AuthZEN endpoints' PEP key (--authzen-pep-key-file). */
const PEP_KEY = "openapi-pep-key-7f3a";
const seen: Seen[] = [];

async function call(
  method: string,
  path: string,
  init: { headers?: Record<string, string>; body?: string } = {},
): Promise<Seen> {
  const res = await svc.fetch(`${path}`, { method, ...init });
  const s = { method, path, status: res.status, headers: res.headers, text: await res.text() };
  seen.push(s);
  return s;
}
const json = { "content-type": "application/json" };

beforeAll(async () => {
  const keys = await makeKeys();
  const dir = tempDir();
  const jwks = join(dir, "jwks.json");
  writeFileSync(jwks, JSON.stringify(keys.jwks));
  writeFileSync(join(dir, "pep.key"), PEP_KEY);
  svc = await serveInjected([
    "--issuer",
    ISSUER,
    "--jwks",
    jwks,
    "--directory",
    writeDirectory(dir, RECORDS),
    "--max-body-bytes",
    "4096",
    "--authzen-pep-key-file",
    join(dir, "pep.key"),
    "--authzen-pdp-id",
    "https://pdp.example",
  ]);
  tokens.teacher = await userToken(keys, TEACHER);
  tokens.machine = await machineToken(keys);
}, 60_000);

afterAll(async () => {
  await svc?.stop();
});

describe("docs/openapi.json", () => {
  it("is OpenAPI 3.1 and documents the request body the code validates", () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.components.schemas.DecideRequest).toEqual(JSON.parse(JSON.stringify(DECIDE_REQUEST_SCHEMA)));
    expect(
      (doc.components.schemas.DecideBatch as { properties: { requests: { maxItems: number } } }).properties.requests
        .maxItems,
    ).toBe(MAX_BATCH);
    const code = (schema: unknown): unknown => JSON.parse(JSON.stringify(schema));
    expect(doc.components.schemas.AuthzenEvaluationRequest).toEqual(code(EVALUATION_REQUEST_SCHEMA));
    expect(doc.components.schemas.AuthzenEvaluationsRequest).toEqual(code(EVALUATIONS_REQUEST_SCHEMA));
    expect(doc.components.schemas.AuthzenSubjectSearchRequest).toEqual(code(SEARCH_REQUEST_SCHEMAS.subject));
    expect(doc.components.schemas.AuthzenResourceSearchRequest).toEqual(code(SEARCH_REQUEST_SCHEMAS.resource));
    expect(doc.components.schemas.AuthzenActionSearchRequest).toEqual(code(SEARCH_REQUEST_SCHEMAS.action));
  });

  it("describes every real answer of the service", async () => {
    const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
    const decideBody = (b: unknown) => ({ headers: json, body: JSON.stringify(b) });
    await call(
      "POST",
      "/decide",
      decideBody({ method: "GET", path: "/v2/ORG001/elevesJeunes/42/absences", token: tokens.teacher }),
    );
    await call(
      "POST",
      "/decide",
      decideBody({ method: "GET", path: "/v2/ORG001/elevesAdultes", token: tokens.teacher }),
    );
    await call("POST", "/decide", decideBody({ method: "GET", path: "/v1/roles" }));
    await call(
      "POST",
      "/decide",
      decideBody({
        requests: [
          { method: "GET", path: "/v1/roles", token: tokens.machine },
          { method: "DELETE", path: "/v1/roles", token: tokens.machine },
        ],
      }),
    );
    await call("POST", "/decide", { headers: json, body: "{not json" });
    await call("POST", "/decide", decideBody({ method: "GET" }));
    await call("POST", "/decide", decideBody({ method: "GET", path: "/v1/roles", token: "x".repeat(8000) }));
    await call("POST", "/decide", {
      headers: { "content-type": "text/plain" },
      body: JSON.stringify({ method: "GET", path: "/v1/roles" }),
    });
    await call("GET", "/decide");
    const nginx = (uri: string, t?: string) =>
      call("GET", "/forward-auth/nginx", {
        headers: { "x-original-method": "GET", "x-original-uri": uri, ...(t ? bearer(t) : {}) },
      });
    await nginx("/v2/ORG001/elevesJeunes/42/absences", tokens.teacher);
    await nginx("/v2/ORG001/elevesAdultes", tokens.teacher);
    await nginx("/v1/roles");
    for (const gw of ["caddy", "traefik"]) {
      await call("GET", `/forward-auth/${gw}`, {
        headers: {
          "x-forwarded-method": "GET",
          "x-forwarded-uri": "/v1/roles",
          "x-forwarded-host": "api.example",
          ...bearer(tokens.machine as string),
        },
      });
    }
    await call("GET", "/forward-auth/caddy", {
      headers: { "x-forwarded-method": "GET", "x-forwarded-uri": "/v1/roles", "x-original-uri": "/v1/roles" },
    });
    await call("GET", "/forward-auth", { headers: { "x-original-method": "GET", "x-original-uri": "/v1/roles" } });
    await call("GET", "/envoy/v1/roles", { headers: bearer(tokens.machine as string) });
    await call("GET", "/envoy/v1/roles");
    // AuthZEN: every endpoint's outcomes, each with an X-Request-ID (echoed: a documented header).
    const pep = { ...json, authorization: `Bearer ${PEP_KEY}`, "x-request-id": "openapi-1" };
    const azPost = (path: string, body: unknown, headers: Record<string, string> = pep) =>
      call("POST", path, { headers, body: typeof body === "string" ? body : JSON.stringify(body) });
    const teacher = { type: "user", id: TEACHER };
    const roles = { type: "route", id: "/v1/roles" };
    await azPost("/access/v1/evaluation", { subject: teacher, action: { name: "GET" }, resource: roles });
    await azPost("/access/v1/evaluation", { subject: teacher, action: { name: "DELETE" }, resource: roles });
    await azPost("/access/v1/evaluation", {
      subject: { type: "group", id: "g" },
      action: { name: "GET" },
      resource: roles,
    });
    await azPost("/access/v1/evaluation", { subject: teacher, action: { name: "GET" } });
    await azPost("/access/v1/evaluation", "{not json");
    await azPost(
      "/access/v1/evaluation",
      { subject: teacher, action: { name: "GET" }, resource: roles },
      {
        ...json,
        "x-request-id": "openapi-4",
      },
    );
    await azPost(
      "/access/v1/evaluation",
      { subject: teacher, action: { name: "GET" }, resource: roles },
      { ...pep, authorization: "Bearer not-the-key" },
    );
    await azPost("/access/v1/evaluation", "x".repeat(5000));
    await call("POST", "/access/v1/evaluation", { headers: { ...pep, "content-type": "text/plain" }, body: "{}" });
    await call("GET", "/access/v1/evaluation", { headers: { "x-request-id": "openapi-2" } });
    await azPost("/access/v1/evaluations", {
      subject: teacher,
      evaluations: [
        { action: { name: "GET" }, resource: roles },
        { action: { name: "PUT" }, resource: roles },
      ],
      options: { evaluations_semantic: "deny_on_first_deny" },
    });
    await azPost("/access/v1/evaluations", { subject: teacher, action: { name: "GET" }, resource: roles });
    await azPost("/access/v1/evaluations", { evaluations: [{ subject: teacher }] });
    const searched = { subject: { type: "user" }, action: { name: "GET" }, resource: roles };
    const first = await azPost("/access/v1/search/subject", { ...searched, page: { limit: 1 } });
    const token = (JSON.parse(first.text) as { page: { next_token: string } }).page.next_token;
    await azPost("/access/v1/search/subject", { ...searched, page: { limit: 1, token } });
    await azPost("/access/v1/search/subject", { ...searched, action: { name: "PUT" }, page: { limit: 1, token } });
    await azPost("/access/v1/search/resource", {
      subject: teacher,
      action: { name: "GET" },
      resource: { type: "route" },
    });
    await azPost("/access/v1/search/action", { subject: teacher, resource: roles });
    await azPost("/access/v1/search/action", { subject: teacher });
    await call("GET", "/.well-known/authzen-configuration", { headers: { "x-request-id": "openapi-3" } });
    await call("GET", "/health");
    await call("GET", "/ready");
    await call("GET", "/metrics");
    await call("GET", "/openapi.json");

    const statuses = new Set(seen.map((s) => `${s.path.split("/").slice(0, 2).join("/")} ${s.status}`));
    for (const expected of [
      "/decide 200",
      "/decide 400",
      "/decide 405",
      "/forward-auth 200",
      "/forward-auth 401",
      "/forward-auth 403",
      "/envoy 200",
      "/envoy 401",
      "/health 200",
      "/ready 200",
      "/metrics 200",
      "/openapi.json 200",
      "/access 200",
      "/access 400",
      "/access 401",
      "/access 405",
      "/access 413",
      "/access 415",
      "/.well-known 200",
    ]) {
      expect(statuses, `an answer ${expected} was exercised`).toContain(expected);
    }
    expect(seen.flatMap(problems)).toEqual([]);
  }, 60_000);

  it("would catch an undocumented status, a missing header and a wrong body", () => {
    const h = (o: Record<string, string>) => new Headers(o);
    expect(
      problems({
        method: "GET",
        path: "/health",
        status: 418,
        headers: h({ "content-type": "application/json" }),
        text: "{}",
      })[0],
    ).toMatch(/status 418 is not documented/);
    expect(
      problems({
        method: "GET",
        path: "/health",
        status: 200,
        headers: h({ "content-type": "application/json" }),
        text: '{"status":"bad"}',
      })[0],
    ).toMatch(/body does not match/);
    // through a $ref into components.schemas
    expect(
      problems({
        method: "POST",
        path: "/decide",
        status: 200,
        headers: h({ "content-type": "application/json" }),
        text: '{"allow":"yes"}',
      })[0],
    ).toMatch(/body does not match/);
    expect(
      problems({
        method: "GET",
        path: "/envoy/v1/roles",
        status: 401,
        headers: h({ "content-type": "application/json" }),
        text: '{"allow":false,"status":401,"reason":"x","message":"m"}',
      }).join("\n"),
    ).toMatch(/documented header WWW-Authenticate missing/);
  });
});
