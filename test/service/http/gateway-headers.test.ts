/**
 * What each gateway endpoint trusts (src/service/http/gateway-headers.ts), asked of `portier serve` directly:
 * only its own family's headers, both families or a repeated header refused (403 request_invalid), one
 * Authorization header on every adapter (401 token_malformed), raw UTF-8 URIs decoded as UTF-8, every
 * X-Portier-* header on an allow, and two spellings of authorization in a /decide body refused (400).
 * The requests reach the service in this process over an in-memory connection (../inject.ts): node:http parses
 * them as it does from a socket, so repeated headers and raw header bytes arrive as a gateway sends them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  ISSUER,
  RECORDS,
  TEACHER,
  makeKeys,
  machineToken,
  tempDir,
  until,
  userToken,
  writeDirectory,
} from "../helpers.js";
import { decide, serveInjected, type InjectedService } from "../inject.js";
import { PORTIER_HEADERS } from "../../../src/service/gateway/answer.js";
import { MAX_PATH_BYTES } from "../../../src/engine/index.js";

let svc: InjectedService;
let teacher: string;
let machine: string;

beforeAll(async () => {
  const keys = await makeKeys();
  const dir = tempDir();
  const jwks = join(dir, "jwks.json");
  writeFileSync(jwks, JSON.stringify(keys.jwks));
  svc = await serveInjected(["--issuer", ISSUER, "--jwks", jwks, "--directory", writeDirectory(dir, RECORDS)]);
  teacher = await userToken(keys, TEACHER);
  machine = await machineToken(keys);
}, 60_000);

afterAll(async () => {
  await svc?.stop();
});

/** The teacher (enseignant_jeune, tenant A) is allowed on ALLOWED and refused on REFUSED. */
const ALLOWED = "/v2/ORG001/elevesJeunes";
const REFUSED = "/v2/ORG001/elevesAdultes";
/** The tables are built before the tokens exist: TEACHER_TOKEN stands for the teacher's token until sent. */
const TEACHER_TOKEN = "@teacher-token@";
const bearer = () => ["Authorization", `Bearer ${TEACHER_TOKEN}`];
const withTokens = (headers: string[]) => headers.map((h) => h.replaceAll(TEACHER_TOKEN, teacher));
const nginx = (uri = ALLOWED, method = "GET") => ["X-Original-Method", method, "X-Original-URI", uri];
/**
 * What Caddy's forward_auth sets on every auth request (seen through caddy 2.6: it overwrites a client's
 * X-Forwarded-Host).
 */
const forwarded = (uri = ALLOWED, method = "GET") => [
  "X-Forwarded-Method",
  method,
  "X-Forwarded-Uri",
  uri,
  "X-Forwarded-Host",
  "api.example",
];
/** The same without X-Forwarded-Host, which Caddy and Traefik always send. */
const hostless = (uri = ALLOWED, method = "GET") => ["X-Forwarded-Method", method, "X-Forwarded-Uri", uri];
/** Traefik forwardAuth's own headers (pkg/middlewares/auth/forward.go: writeHeader). */
const traefik = (uri = ALLOWED, method = "GET") => [
  "X-Forwarded-For",
  "127.0.0.1",
  "X-Forwarded-Method",
  method,
  "X-Forwarded-Proto",
  "http",
  "X-Forwarded-Port",
  "80",
  "X-Forwarded-Host",
  "api.example",
  "X-Forwarded-Uri",
  uri,
];
/** Raw UTF-8 bytes as Node sends a header value: one latin1 character per byte. */
const rawUtf8 = (s: string) => Buffer.from(s, "utf8").toString("latin1");

interface Case {
  why: string;
  endpoint: string;
  headers: string[];
  status: 200 | 401 | 403;
  reason: string;
}

const CASES: Case[] = [
  // Item 1: each endpoint reads only its gateway family's headers.
  {
    why: "nginx: X-Original-* only",
    endpoint: "nginx",
    headers: [...bearer(), ...nginx()],
    status: 200,
    reason: "allowed",
  },
  {
    why: "nginx: a front proxy's X-Forwarded-Host/-For are not the other family",
    endpoint: "nginx",
    headers: [...bearer(), ...nginx(), "X-Forwarded-Host", "a", "X-Forwarded-For", "1.2.3.4"],
    status: 200,
    reason: "allowed",
  },
  {
    why: "nginx: judged on X-Original-URI, never on X-Forwarded-Uri",
    endpoint: "nginx",
    headers: [...bearer(), ...nginx(REFUSED)],
    status: 403,
    reason: "role_not_allowed",
  },
  {
    why: "nginx: X-Forwarded-Uri as well is refused",
    endpoint: "nginx",
    headers: [...bearer(), ...nginx(REFUSED), "X-Forwarded-Uri", ALLOWED],
    status: 403,
    reason: "request_invalid",
  },
  {
    why: "nginx: X-Forwarded-Method as well is refused",
    endpoint: "nginx",
    headers: [...bearer(), ...nginx(ALLOWED, "DELETE"), "X-Forwarded-Method", "GET"],
    status: 403,
    reason: "request_invalid",
  },
  {
    why: "nginx: two X-Original-URI",
    endpoint: "nginx",
    headers: [...bearer(), ...nginx(REFUSED), "X-Original-URI", ALLOWED],
    status: 403,
    reason: "request_invalid",
  },
  {
    why: "nginx: two X-Original-Method, differently spelt",
    endpoint: "nginx",
    headers: [...bearer(), ...nginx(ALLOWED, "DELETE"), "x-original-method", "GET"],
    status: 403,
    reason: "request_invalid",
  },
  {
    why: "nginx: the other family only",
    endpoint: "nginx",
    headers: [...bearer(), ...forwarded()],
    status: 403,
    reason: "request_invalid",
  },
  {
    why: "caddy: X-Forwarded-* only",
    endpoint: "caddy",
    headers: [...bearer(), ...forwarded()],
    status: 200,
    reason: "allowed",
  },
  {
    why: "caddy: the client's X-Original-URI is refused, not judged",
    endpoint: "caddy",
    headers: [...bearer(), ...forwarded(REFUSED), "X-Original-URI", ALLOWED],
    status: 403,
    reason: "request_invalid",
  },
  {
    why: "caddy: the client's X-Original-Method on a DELETE is refused",
    endpoint: "caddy",
    headers: [...bearer(), ...forwarded(ALLOWED, "DELETE"), "X-Original-Method", "GET"],
    status: 403,
    reason: "request_invalid",
  },
  {
    why: "caddy: cross-tenant URI forged in X-Original-URI",
    endpoint: "caddy",
    headers: [...bearer(), ...forwarded("/v2/ORG002/elevesJeunes"), "X-Original-URI", ALLOWED],
    status: 403,
    reason: "request_invalid",
  },
  {
    why: "caddy: judged on X-Forwarded-Uri",
    endpoint: "caddy",
    headers: [...bearer(), ...forwarded(REFUSED)],
    status: 403,
    reason: "role_not_allowed",
  },
  {
    why: "caddy: two X-Forwarded-Uri",
    endpoint: "caddy",
    headers: [...bearer(), ...forwarded(REFUSED), "X-Forwarded-Uri", ALLOWED],
    status: 403,
    reason: "request_invalid",
  },
  {
    why: "caddy: two X-Forwarded-Host",
    endpoint: "caddy",
    headers: [...bearer(), ...forwarded(), "X-Forwarded-Host", "a", "X-Forwarded-Host", "b"],
    status: 403,
    reason: "request_invalid",
  },
  {
    why: "caddy: the original query string on the endpoint is ignored",
    endpoint: "caddy?annee=2026",
    headers: [...bearer(), ...forwarded()],
    status: 200,
    reason: "allowed",
  },
  {
    why: "traefik: the headers Traefik sets",
    endpoint: "traefik",
    headers: [...bearer(), ...traefik()],
    status: 200,
    reason: "allowed",
  },
  {
    why: "traefik: a client's X-Original-URI copied by Traefik is refused",
    endpoint: "traefik",
    headers: [...bearer(), ...traefik(REFUSED), "X-Original-URI", ALLOWED],
    status: 403,
    reason: "request_invalid",
  },
  {
    why: "traefik: the other family only",
    endpoint: "traefik",
    headers: [...bearer(), ...nginx()],
    status: 403,
    reason: "request_invalid",
  },
  // Issue 17 item 3: Caddy and Traefik always send X-Forwarded-Host; a request without it (or with it empty, or only
  // in a spelling that is another header) did not come from them.
  ...(["caddy", "traefik"] as const).flatMap((endpoint): Case[] => [
    {
      why: `${endpoint}: X-Forwarded-Host missing`,
      endpoint,
      headers: [...bearer(), ...hostless()],
      status: 403,
      reason: "request_invalid",
    },
    {
      why: `${endpoint}: X-Forwarded-Host empty`,
      endpoint,
      headers: [...bearer(), ...hostless(), "X-Forwarded-Host", ""],
      status: 403,
      reason: "request_invalid",
    },
    {
      why: `${endpoint}: X-Forwarded-Host only as X_Forwarded_Host`,
      endpoint,
      headers: [...bearer(), ...hostless(), "X_Forwarded_Host", "api.example"],
      status: 403,
      reason: "request_invalid",
    },
    {
      why: `${endpoint}: X-Forwarded-Method empty`,
      endpoint,
      headers: [...bearer(), "X-Forwarded-Method", "", "X-Forwarded-Uri", ALLOWED, "X-Forwarded-Host", "api.example"],
      status: 403,
      reason: "request_invalid",
    },
  ]),
  {
    why: "nginx: X-Original-URI missing",
    endpoint: "nginx",
    headers: [...bearer(), "X-Original-Method", "GET"],
    status: 403,
    reason: "request_invalid",
  },
  {
    why: "the generic /forward-auth is not served",
    endpoint: "",
    headers: [...bearer(), ...nginx()],
    status: 403,
    reason: "request_invalid",
  },
  {
    why: "an unknown gateway family",
    endpoint: "haproxy",
    headers: [...bearer(), ...nginx()],
    status: 403,
    reason: "request_invalid",
  },
  // Item 5: exactly one Authorization header.
  {
    why: "nginx: two Authorization headers, the first valid",
    endpoint: "nginx",
    headers: [...bearer(), "Authorization", "Bearer other", ...nginx()],
    status: 401,
    reason: "token_malformed",
  },
  {
    why: "caddy: the same token twice, spelt differently",
    endpoint: "caddy",
    headers: [...bearer(), "authorization", `Bearer ${TEACHER_TOKEN}`, ...forwarded()],
    status: 401,
    reason: "token_malformed",
  },
  // Item 7: raw UTF-8 bytes in the URI header.
  {
    why: "nginx: raw UTF-8 /écoles is decoded as UTF-8",
    endpoint: "nginx",
    headers: [...bearer(), ...nginx(rawUtf8("/v2/ORG001/écoles"))],
    status: 200,
    reason: "allowed",
  },
  {
    why: "caddy: raw UTF-8 /bâtiments is decoded as UTF-8",
    endpoint: "caddy",
    headers: [...bearer(), ...forwarded(rawUtf8("/v2/ORG001/bâtiments"))],
    status: 200,
    reason: "allowed",
  },
  {
    why: "nginx: raw bytes that are not UTF-8",
    endpoint: "nginx",
    headers: [...bearer(), ...nginx("/v2/ORG001/\xe9coles")],
    status: 403,
    reason: "path_invalid",
  },
  {
    why: "nginx: a lone raw continuation byte",
    endpoint: "nginx",
    headers: [...bearer(), ...nginx("/v2/ORG001/centres\x85")],
    status: 403,
    reason: "path_invalid",
  },
];

describe("forward-auth endpoints: what each one trusts", () => {
  it.each(CASES)("$status $reason: /forward-auth/$endpoint, $why", async ({ endpoint, headers, status, reason }) => {
    const res = await svc.send(`/forward-auth${endpoint ? `/${endpoint}` : ""}`, { headers: withTokens(headers) });
    const shown = `${res.status} ${JSON.stringify(res.headers)} ${res.body}`;
    expect(res.status, shown).toBe(status);
    expect(res.headers["x-portier-reason"], shown).toBe(reason);
    if (status === 401) expect(res.headers["www-authenticate"], shown).toMatch(/^Bearer error="invalid_token"/);
    if (status !== 200) expect(res.headers, shown).not.toHaveProperty("x-portier-subject");
  });
});

describe("a refused gateway request is logged", () => {
  it("one warn line naming the endpoint and the headers, never a token", async () => {
    const res = await svc.send("/forward-auth/caddy", {
      headers: withTokens([...bearer(), ...forwarded(REFUSED), "X-Original-URI", "/v2/ORG001/logged"]),
    });
    expect(res.status).toBe(403);
    let line: Record<string, unknown> | undefined;
    await until(() => {
      line = svc
        .output()
        .split("\n")
        .filter((l) => l.includes("gateway_request_refused") && l.includes("/forward-auth/caddy"))
        .map((l) => JSON.parse(l) as Record<string, unknown>)[0];
      return line !== undefined;
    });
    expect(line).toMatchObject({
      event: "gateway_request_refused",
      endpoint: "/forward-auth/caddy",
      reason: "request_invalid",
    });
    expect(String(line!.message)).toContain("X-Original-URI");
    expect(JSON.stringify(line)).not.toContain(teacher.split(".")[2]!);
  });
});

describe("a forward-auth endpoint that names no gateway family", () => {
  it.each(["/forward-auth", "/forward-auth/", "/forward-auth/apache"])(
    "%s: 403 request_invalid naming the three endpoints, logged",
    async (endpoint) => {
      const res = await svc.send(endpoint, { headers: withTokens([...bearer(), ...nginx()]) });
      const message =
        "use /forward-auth/nginx (X-Original-Method, X-Original-URI), /forward-auth/caddy or /forward-auth/traefik " +
        "(X-Forwarded-Method, X-Forwarded-Uri)";
      expect(res.status).toBe(403);
      expect(res.headers["x-portier-reason"]).toBe("request_invalid");
      expect(JSON.parse(res.body)).toEqual({ allow: false, status: 403, reason: "request_invalid", message });
      await until(() =>
        svc
          .output()
          .split("\n")
          .some((l) => l.includes("gateway_request_refused") && l.includes(`"endpoint":"${endpoint}"`)),
      );
    },
  );
});

describe("Envoy ext_authz (/envoy/<path>): one Authorization header", () => {
  it.each([
    { why: "two Authorization headers", headers: [...bearer(), "Authorization", "Bearer other"] },
    // Envoy joins a repeated header into one value with ","  (check_request_utils.cc, setHttpRequest).
    {
      why: "Envoy's comma-joined form of two headers",
      headers: ["Authorization", `Bearer ${TEACHER_TOKEN},Bearer ${TEACHER_TOKEN}`],
    },
  ])("401 token_malformed: $why", async ({ headers }) => {
    const res = await svc.send(`/envoy${ALLOWED}`, { headers: withTokens(headers) });
    expect(res.status).toBe(401);
    expect(res.headers["x-portier-reason"]).toBe("token_malformed");
  });

  it("one header allows", async () => {
    const res = await svc.send(`/envoy${ALLOWED}`, { headers: withTokens(bearer()) });
    expect(res.status).toBe(200);
  });
});

describe("X-Portier-* answer headers", () => {
  it.each([
    {
      who: "a user",
      token: () => teacher,
      expected: {
        "x-portier-subject": TEACHER,
        "x-portier-roles": "enseignant_jeune",
        "x-portier-client-id": "web",
        "x-portier-flow": "accessCode",
      },
    },
    {
      who: "an application",
      token: () => machine,
      expected: {
        "x-portier-subject": "machine",
        "x-portier-roles": "",
        "x-portier-client-id": "machine",
        "x-portier-flow": "application",
      },
    },
  ])(
    "every header Portier can set is on an allow for $who, so the gateway replaces each one",
    async ({ token, expected }) => {
      for (const endpoint of ["/forward-auth/nginx", `/envoy${ALLOWED}`]) {
        const res = await svc.send(endpoint, { headers: ["Authorization", `Bearer ${token()}`, ...nginx()] });
        expect(res.status).toBe(200);
        for (const name of PORTIER_HEADERS)
          expect(res.headers, `${endpoint} ${name}`).toHaveProperty(name.toLowerCase());
        expect(res.headers).toMatchObject({ ...expected, "x-portier-reason": "allowed" });
      }
    },
  );
});

describe("POST /decide: one authorization in headers", () => {
  it("two spellings of authorization are a 400 naming the field", async () => {
    const res = await decide(svc, {
      method: "GET",
      path: ALLOWED,
      headers: { Authorization: `Bearer ${teacher}`, authorization: "Bearer other" },
    });
    expect(res.status).toBe(400);
    expect(res.json.message).toBe("body.headers: more than one authorization header (Authorization, authorization)");
  });

  it("in a batch, the request is named by its position", async () => {
    const one = { method: "GET", path: ALLOWED, headers: { authorization: `Bearer ${teacher}` } };
    const res = await decide(svc, {
      requests: [one, { ...one, headers: { AUTHORIZATION: "Bearer x", authorization: `Bearer ${teacher}` } }],
    });
    expect(res.status).toBe(400);
    expect(res.json.message).toMatch(/^body\.requests\.1\.headers: more than one authorization header/);
  });

  it("one spelling, any case, is read", async () => {
    const res = await decide(svc, {
      method: "GET",
      path: ALLOWED,
      headers: { AuThOrIzAtIoN: `Bearer ${teacher}` },
    });
    expect(res.status).toBe(200);
    expect(res.json.allow).toBe(true);
  });
});

// Issue 17 item 9: methods are case-insensitive on the way in and decided upper-case (the policy input and its
// messages say DELETE, never delete). Method names are case-sensitive in HTTP, but a gateway or sidecar that
// lower-cases one must neither be refused nor let a DELETE through as something else.
describe("a lower-case method is decided as upper-case", () => {
  const CASES_BY_METHOD = [
    { method: "get", allow: true, message: /is allowed/ },
    { method: "head", allow: true, message: /is allowed/ },
    { method: "Get", allow: true, message: /is allowed/ },
    { method: "delete", allow: false, message: /^method DELETE is not allowed/ },
    { method: "post", allow: false, message: /^method POST is not allowed/ },
  ];

  it.each(CASES_BY_METHOD)("POST /decide, method $method", async ({ method, allow, message }) => {
    const res = await decide(svc, { method, path: ALLOWED, token: teacher });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ allow, reason: allow ? "allowed" : "method_not_allowed" });
    expect(res.json.message).toMatch(message);
  });

  it.each(
    CASES_BY_METHOD.flatMap((c) => (["nginx", "caddy", "traefik"] as const).map((endpoint) => ({ ...c, endpoint }))),
  )("/forward-auth/$endpoint, method $method", async ({ method, allow, endpoint }) => {
    const headers =
      endpoint === "nginx"
        ? nginx(ALLOWED, method)
        : endpoint === "caddy"
          ? forwarded(ALLOWED, method)
          : traefik(ALLOWED, method);
    const res = await svc.send(`/forward-auth/${endpoint}`, { headers: withTokens([...bearer(), ...headers]) });
    expect(res.status).toBe(allow ? 200 : 403);
    expect(res.headers["x-portier-reason"]).toBe(allow ? "allowed" : "method_not_allowed");
  });
});

// Issue 17 item 9: a path of exactly MAX_PATH_BYTES is judged (no route has it: route_unknown), one byte more is
// path_invalid, whether it comes in a /decide body or in a gateway's URI header.
describe("the path length limit, end to end", () => {
  const atLimit = `/v2/ORG001/${"a".repeat(MAX_PATH_BYTES - "/v2/ORG001/".length)}`;
  it.each([
    { why: "exactly the limit", path: atLimit, reason: "route_unknown" },
    { why: "one byte more", path: `${atLimit}b`, reason: "path_invalid" },
  ])("$why: $reason", async ({ path, reason }) => {
    const res = await decide(svc, { method: "GET", path, token: teacher });
    expect(res.json.reason).toBe(reason);
    const viaNginx = await svc.send("/forward-auth/nginx", { headers: withTokens([...bearer(), ...nginx(path)]) });
    expect(viaNginx.headers["x-portier-reason"]).toBe(reason);
    const viaCaddy = await svc.send("/forward-auth/caddy", {
      headers: withTokens([...bearer(), ...forwarded(path)]),
    });
    expect(viaCaddy.headers["x-portier-reason"]).toBe(reason);
  });
});
