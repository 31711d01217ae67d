/**
 * `portier serve` in this process (requests over an in-memory connection: inject.ts) with a test JWKS and
 * directory: every endpoint, the reasons, each adapter's status codes and headers, bad bodies, decision log
 * without tokens.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  ADULT_STUDENT,
  ISSUER,
  RECORDS,
  TEACHER,
  UNSYNCED,
  machineToken,
  makeKeys,
  sign,
  tempDir,
  until,
  userToken,
  writeDirectory,
  type Keys,
} from "./helpers.js";
import { decide, serveInjected, type InjectedService } from "./inject.js";
import { TENANT_A } from "../support/sample.js";
import { json, type DecideJson } from "../support/answers.js";
import { metricValue } from "../support/metrics.js";

const STARTED_S = Math.floor(Date.now() / 1000);
const PACKAGE_VERSION = (JSON.parse(readFileSync("package.json", "utf8")) as { version: string }).version;

let keys: Keys;
let svc: InjectedService;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  keys = await makeKeys();
  const dir = tempDir();
  const jwks = join(dir, "jwks.json");
  writeFileSync(jwks, JSON.stringify(keys.jwks));
  const directory = writeDirectory(dir, RECORDS);
  svc = await serveInjected(["--issuer", ISSUER, "--jwks", jwks, "--directory", directory, "--max-body-bytes", "4096"]);
  tokens.teacher = await userToken(keys, TEACHER);
  tokens.adult = await userToken(keys, ADULT_STUDENT);
  tokens.unsynced = await userToken(keys, UNSYNCED);
  tokens.noScope = await userToken(keys, TEACHER, { scope: ["openid"] });
  tokens.machine = await machineToken(keys);
  tokens.expired = await sign(
    keys,
    { sub: TEACHER, client_id: "web", tenant_id: "t", auth_time: 1, idp: "x", scope: ["apiclients"] },
    { expSec: -3600 },
  );
  tokens.unknownKid = await userToken(keys, TEACHER).then(() =>
    sign(keys, { sub: TEACHER, scope: ["apiclients"], auth_time: 1, idp: "x" }, { kid: "nope" }),
  );
  const other = await makeKeys("k1");
  tokens.forged = await userToken(other, TEACHER);
}, 60_000);

afterAll(async () => {
  await svc?.stop();
});

const ask = (token: string | undefined, path: string, method = "GET") =>
  decide(svc, { method, path, ...(token ? { token } : {}) });

describe("POST /decide", () => {
  it("allows a teacher on a route of their role and answers the whole decision", async () => {
    const { status, json } = await ask(tokens.teacher, "/v2/ORG001/elevesJeunes/42/absences?x=1");
    expect(status).toBe(200);
    expect(json).toMatchObject({ allow: true, status: 200, reason: "allowed", flow: "accessCode", deprecated: true });
    expect(json.decision_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(json.route).toMatchObject({
      product: "Élève",
      template: "/v2/{codeOrganisme}/elevesJeunes/{idEleveJeune}/absences",
      parameters: { codeOrganisme: "ORG001", idEleveJeune: "42" },
    });
    expect(json.subject).toEqual({ sub: TEACHER, client_id: "web", tenant_id: TENANT_A, roles: ["enseignant_jeune"] });
  });

  it("takes the token from headers.authorization too", async () => {
    const { json } = await decide(svc, {
      method: "GET",
      path: "/v2/ORG001/centres",
      headers: { Authorization: `Bearer ${tokens.teacher}` },
    });
    expect(json.allow).toBe(true);
  });

  it("maps a directory label to its role id (Élève adulte -> eleve_adulte)", async () => {
    const { json } = await ask(tokens.adult, "/v2/ORG001/elevesAdultes/7/calendrierScolaire");
    expect(json).toMatchObject({ allow: true, subject: { roles: ["eleve_adulte"] } });
  });

  it("allows the application flow on any known route, with client_id as subject", async () => {
    const { json } = await ask(tokens.machine, "/v2/ORG001/elevesAdultes");
    expect(json).toMatchObject({ allow: true, flow: "application", subject: { client_id: "machine", roles: [] } });
  });

  it.each([
    ["role_not_allowed", "teacher", "/v2/ORG001/elevesAdultes", "GET", 403],
    ["not_synced", "unsynced", "/v2/ORG001/centres", "GET", 403],
    ["route_unknown", "teacher", "/v9/nothing", "GET", 403],
    ["method_not_allowed", "teacher", "/v2/ORG001/centres", "POST", 403],
    ["scope_missing", "noScope", "/v2/ORG001/centres", "GET", 403],
    ["tenant_mismatch", "teacher", "/v2/ORG002/centres", "GET", 403],
    ["path_invalid", "teacher", "/v2/ORG001/../centres", "GET", 403],
    ["path_invalid", "teacher", "/v2/ORG001%2Fcentres", "GET", 403],
    ["token_expired", "expired", "/v2/ORG001/centres", "GET", 401],
    ["signature_invalid", "forged", "/v2/ORG001/centres", "GET", 401],
    ["kid_unknown", "unknownKid", "/v2/ORG001/centres", "GET", 401],
  ])("denies with reason %s", async (reason, who, path, method, status) => {
    const { status: http, json } = await ask(tokens[who], path, method);
    expect(http).toBe(200);
    expect(json).toMatchObject({ allow: false, reason, status });
  });

  it("denies 401 token_missing without a token and token_malformed on garbage", async () => {
    expect((await ask(undefined, "/v2/ORG001/centres")).json).toMatchObject({
      allow: false,
      status: 401,
      reason: "token_missing",
      subject: null,
    });
    expect((await ask("abc.def", "/v2/ORG001/centres")).json).toMatchObject({
      allow: false,
      status: 401,
      reason: "token_malformed",
    });
    const basic = await decide(svc, {
      method: "GET",
      path: "/v1/roles",
      headers: { authorization: "Basic dXNlcjpwdw==" },
    });
    expect(basic.json).toMatchObject({ allow: false, status: 401, reason: "token_malformed" });
  });

  it("answers a batch in order", async () => {
    const { status, json } = await decide<DecideJson[]>(svc, {
      requests: [
        { method: "GET", path: "/v1/roles", token: tokens.teacher },
        { method: "GET", path: "/v1/roles" },
        { method: "GET", path: "/v2/ORG001/elevesAdultes", token: tokens.machine },
      ],
    });
    expect(status).toBe(200);
    expect(json.map((d) => d.reason)).toEqual(["allowed", "token_missing", "allowed"]);
    expect(new Set(json.map((d) => d.decision_id)).size).toBe(3);
  });

  it.each([
    [{ path: "/v1/roles" }, "body.method: is required"],
    [{ method: "GET" }, "body.path: is required"],
    [{ method: 42, path: "/v1/roles" }, "body.method: must be string"],
    [{ method: "GET", path: "/v1/roles", extra: 1 }, "body.extra: is not allowed"],
    [{ requests: [{ method: "GET", path: "/" }, { method: "GET" }] }, "body.requests.1.path: is required"],
    [{ requests: [] }, "body.requests: must NOT have fewer than 1 items"],
    [[1, 2], "body: must be a JSON object"],
  ])("400 naming the field for %j", async (body, message) => {
    const { status, json } = await decide(svc, body);
    expect(status).toBe(400);
    expect(json.message).toBe(message);
  });

  it("400 with the position on malformed JSON, 413 over the size cap, 405 on GET", async () => {
    const bad = await decide(svc, '{"method": "GET", "path": ');
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ error: "invalid_json" });
    expect(bad.json.message).toMatch(/position|column|end of JSON/i);
    const big = await decide(svc, { method: "GET", path: "/v1/roles", token: "x".repeat(5000) });
    expect(big.status).toBe(413);
    expect((await svc.fetch(`/decide`)).status).toBe(405);
  });
});

describe("GET /forward-auth/nginx, /forward-auth/caddy, /forward-auth/traefik", () => {
  const fa = (headers: Record<string, string>, method = "GET", family = "nginx") =>
    svc.fetch(`/forward-auth/${family}`, { method, headers });

  it("nginx: 200 with the X-Portier-* headers", async () => {
    const res = await fa({
      "X-Original-Method": "GET",
      "X-Original-URI": "/v2/ORG001/elevesJeunes?page=2",
      Authorization: `Bearer ${tokens.teacher}`,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-portier-decision-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.get("x-portier-subject")).toBe(TEACHER);
    expect(res.headers.get("x-portier-tenant")).toBe(TENANT_A);
    expect(res.headers.get("x-portier-roles")).toBe("enseignant_jeune");
  });

  it("Traefik/Caddy: X-Forwarded-Method / X-Forwarded-Uri; machine subject is the client id", async () => {
    const res = await fa(
      {
        "X-Forwarded-Method": "GET",
        "X-Forwarded-Uri": "/v1/roles",
        "X-Forwarded-Host": "api.example",
        Authorization: `Bearer ${tokens.machine}`,
      },
      "GET",
      "caddy",
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("x-portier-subject")).toBe("machine");
    expect(res.headers.get("x-portier-roles")).toBe("");
  });

  it("401 with WWW-Authenticate (bare Bearer without a token, invalid_token with one)", async () => {
    const none = await fa({ "X-Original-Method": "GET", "X-Original-URI": "/v1/roles" });
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe("Bearer");
    const expired = await fa({
      "X-Original-Method": "GET",
      "X-Original-URI": "/v1/roles",
      Authorization: `Bearer ${tokens.expired}`,
    });
    expect(expired.status).toBe(401);
    expect(expired.headers.get("www-authenticate")).toMatch(
      /^Bearer error="invalid_token", error_description="token_expired/,
    );
    expect(expired.headers.get("x-portier-subject")).toBeNull();
  });

  it("403 on a denial, on an invalid path, and when the original request headers are missing", async () => {
    const role = await fa({
      "X-Original-Method": "GET",
      "X-Original-URI": "/v2/ORG001/elevesAdultes",
      Authorization: `Bearer ${tokens.teacher}`,
    });
    expect(role.status).toBe(403);
    expect(role.headers.get("x-portier-reason")).toBe("role_not_allowed");
    expect(role.headers.get("x-portier-subject")).toBeNull();
    const path = await fa({
      "X-Original-Method": "GET",
      "X-Original-URI": "/v2/%00/centres",
      Authorization: `Bearer ${tokens.teacher}`,
    });
    expect(path.status).toBe(403);
    const missing = await fa({ Authorization: `Bearer ${tokens.teacher}` });
    expect(missing.status).toBe(403);
    expect((await json<DecideJson>(missing)).reason).toBe("request_invalid");
  });

  it("accepts any method on the endpoint itself (nginx subrequests may be HEAD/POST)", async () => {
    const res = await fa(
      { "X-Original-Method": "GET", "X-Original-URI": "/v1/roles", Authorization: `Bearer ${tokens.teacher}` },
      "POST",
    );
    expect(res.status).toBe(200);
  });
});

describe("the Authorization value reads the same through POST /decide's headers and a gateway's header", () => {
  // A comma is how a proxy folds two Authorization headers into one: never one bearer credential.
  it.each([
    ["a bearer token", () => `Bearer ${tokens.teacher}`],
    ["two credentials folded with a comma", () => `Bearer ${tokens.teacher}, Bearer ${tokens.machine}`],
    ["a token with a comma in it", () => `Bearer ${tokens.teacher},x`],
    ["another scheme", () => `Basic ${Buffer.from("a:b").toString("base64")}`],
    ["an empty bearer", () => "Bearer "],
  ])("%s", async (_name, value) => {
    const path = "/v2/ORG001/centres";
    const viaDecide = await decide(svc, { method: "GET", path, headers: { Authorization: value() } });
    const viaGateway = await svc.fetch(`/forward-auth/nginx`, {
      headers: { "X-Original-Method": "GET", "X-Original-URI": path, Authorization: value() },
    });
    const gateway = await json<{ message?: string }>(viaGateway);
    expect(viaDecide.status).toBe(200);
    expect({ status: viaDecide.json.status, reason: viaDecide.json.reason }).toEqual({
      status: viaGateway.status,
      reason: viaGateway.headers.get("x-portier-reason") ?? "allowed",
    });
    if (viaGateway.status !== 200) expect(viaDecide.json.message).toBe(gateway.message);
  });
});

describe("Envoy ext_authz HTTP service (/envoy/<path>)", () => {
  it("200 allows with headers; 401 with WWW-Authenticate and a JSON body; 403 with a JSON body", async () => {
    const ok = await svc.fetch(`/envoy/v2/ORG001/centres?x=1`, {
      headers: { authorization: `Bearer ${tokens.teacher}` },
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-portier-subject")).toBe(TEACHER);
    const anon = await svc.fetch(`/envoy/v2/ORG001/centres`);
    expect(anon.status).toBe(401);
    expect(anon.headers.get("www-authenticate")).toBe("Bearer");
    expect(await anon.json()).toMatchObject({ allow: false, reason: "token_missing" });
    const post = await svc.fetch(`/envoy/v2/ORG001/centres`, {
      method: "POST",
      headers: { authorization: `Bearer ${tokens.teacher}` },
    });
    expect(post.status).toBe(403);
    expect(await post.json()).toMatchObject({ allow: false, reason: "method_not_allowed" });
  });
});

describe("fail closed, never crash on input", () => {
  it.each([
    ["/v2/%ff/centres", "path_invalid"],
    ["/v2/ORG001/centres%5c..", "path_invalid"],
    [`/v2/${"a".repeat(5000)}`, "path_invalid"],
    ["v2/ORG001/centres", "path_invalid"],
    ["/v2/ORG001//centres", "path_invalid"],
  ])("forward-auth %s -> 403 %s", async (uri, reason) => {
    const res = await svc.fetch(`/forward-auth/nginx`, {
      headers: { "X-Original-Method": "GET", "X-Original-URI": uri, Authorization: `Bearer ${tokens.teacher}` },
    });
    expect(res.status).toBe(403);
    expect(res.headers.get("x-portier-reason")).toBe(reason);
  });

  it("odd methods, empty bearer and binary bodies are denied; the service stays up", async () => {
    const odd = await svc.fetch(`/forward-auth/nginx`, {
      headers: {
        "X-Original-Method": "PROPFIND",
        "X-Original-URI": "/v1/roles",
        Authorization: `Bearer ${tokens.teacher}`,
      },
    });
    expect(odd.status).toBe(403);
    const empty = await svc.fetch(`/forward-auth/nginx`, {
      headers: { "X-Original-Method": "GET", "X-Original-URI": "/v1/roles", Authorization: "Bearer " },
    });
    expect(empty.status).toBe(401);
    const binary = await svc.fetch(`/decide`, { method: "POST", body: new Uint8Array([0xff, 0xfe, 0, 1, 2]) });
    expect(binary.status).toBe(400);
    expect((await svc.fetch(`/health`)).status).toBe(200);
  });
});

describe("health, ready, metrics", () => {
  it("GET /health and /ready", async () => {
    expect(await (await svc.fetch(`/health`)).json()).toEqual({ status: "ok" });
    const ready = await svc.fetch(`/ready`);
    expect(ready.status).toBe(200);
    const body = await ready.json();
    expect(body).toMatchObject({
      ready: true,
      missing: [],
      policy: { loaded: true },
      keys: { ready: true },
      directory: { size: 2 },
    });
  });

  it(
    "GET /metrics: decisions by result/reason/flow, " + "latency histogram, keys, policy revision, directory size",
    async () => {
      const res = await svc.fetch(`/metrics`);
      expect(res.headers.get("content-type")).toContain("text/plain");
      const text = await res.text();
      expect(text).toMatch(
        /portier_decisions_total\{allow="true",reason="allowed",flow="accessCode",adapter="decide"\} \d+/,
      );
      expect(text).toMatch(/portier_decisions_total\{allow="false",reason="token_missing",flow="none"/);
      expect(text).toContain("portier_decision_duration_seconds_bucket");
      expect(metricValue(text, "portier_keys_reload_successes_total")).toBeGreaterThan(0);
      expect(metricValue(text, "portier_key_refreshes_total")).toBe(
        metricValue(text, "portier_keys_reload_successes_total"),
      );
      expect(
        metricValue(text, "portier_build_info", {
          version: PACKAGE_VERSION,
          node_version: process.versions.node,
          revision: "unknown",
        }),
      ).toBe(1);
      // Every input the service loaded at start has a last success within the test's lifetime.
      for (const input of ["keys", "policy", "directory"]) {
        const at = metricValue(text, `portier_${input}_last_success_timestamp_seconds`)!;
        expect(at, input).toBeGreaterThan(STARTED_S);
        expect(at, input).toBeLessThanOrEqual(Date.now() / 1000);
        expect(metricValue(text, `portier_${input}_reload_successes_total`), input).toBeGreaterThan(0);
      }
      expect(
        metricValue(text, "portier_decision_duration_seconds_bucket", { le: "5", adapter: "decide" }),
      ).toBeDefined();
      expect(text).toMatch(/portier_policy_revision_info\{revision="[^"]+"\} 1/);
      expect(metricValue(text, "portier_directory_size")).toBe(2);
    },
  );

  it("GET /metrics: the decision memo's hits and misses, one lookup per decision the policy is asked for", async () => {
    const scrape = async () => {
      const text = await (await svc.fetch(`/metrics`)).text();
      const value = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, "m").exec(text)?.[1]);
      return { hits: value("portier_decision_memo_hits_total"), misses: value("portier_decision_memo_misses_total") };
    };
    const before = await scrape();
    for (let i = 0; i < 3; i++) {
      const res = await svc.fetch(`/forward-auth/nginx`, {
        headers: {
          "X-Original-Method": "GET",
          "X-Original-URI": "/v2/ORG001/elevesJeunes/memo-1/absences",
          Authorization: `Bearer ${tokens.teacher}`,
        },
      });
      expect(res.status).toBe(200);
    }
    const after = await scrape();
    // Stored at its second miss, answered from the memo at the third.
    expect(after.hits - before.hits + (after.misses - before.misses)).toBe(3);
    expect(after.hits - before.hits).toBe(1);
  });

  it("404 on unknown endpoints", async () => {
    expect((await svc.fetch(`/nope`)).status).toBe(404);
  });
});

describe("decision log", () => {
  it("one JSON line per decision, with the fields, never a token or Authorization header", async () => {
    // The log is written asynchronously: wait for the lines of the decisions above, not a fixed time.
    const logged = () =>
      svc
        .output()
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    await until(() => logged().filter((l) => l.msg === "decision").length > 20);
    const decisions = logged().filter((l) => l.msg === "decision");
    expect(decisions.length).toBeGreaterThan(20);
    const one = decisions.find((d) => d.reason === "allowed" && d.sub === TEACHER)!;
    for (const k of [
      "decision_id",
      "time",
      "method",
      "path",
      "route",
      "flow",
      "client_id",
      "sub",
      "tenant_id",
      "roles",
      "allow",
      "reason",
      "revision",
      "latency_ms",
    ])
      expect(one).toHaveProperty(k);
    const all = svc.output() + svc.stderr();
    for (const t of Object.values(tokens)) {
      expect(all).not.toContain(t);
      expect(all).not.toContain(t.split(".")[2]!);
    }
    // No Authorization value ("Bearer <jwt>"); the word alone may appear in a decision's message.
    expect(all).not.toMatch(/bearer\s+[\w-]+\.[\w-]+/i);
    expect(all).not.toMatch(/"authorization"/i);
  });
});
