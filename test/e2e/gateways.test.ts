/**
 * End to end with real gateways (issue 6): the local issuer and the decision service run as processes
 * (`portier issuer`, `portier serve`), tokens come from the issuer through openid-client (client
 * credentials, and authorization code + PKCE), and real nginx (auth_request) and caddy (forward_auth)
 * with the shipped configs of docs/gateways/ sit in front of an echo upstream, Portier's
 * /forward-auth/nginx and /forward-auth/caddy as their auth endpoints. Each case checks
 * the status the client gets, whether the upstream was reached, and the X-Portier-* headers it received.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeThroughGateways } from "./harness/describe-gateways.js";
import { type GatewayKind, type RunningGateway } from "./harness/gateways.js";
import { bearer, send, type RawResponse } from "./harness/http.js";
import { startIssuerProcess, startServiceProcess, type RunningPortier } from "./harness/portier.js";
import { MACHINE_CLIENT, TENANT_A, USERS, machineToken, userToken, type Username } from "./harness/tokens.js";
import { startUpstream, UPSTREAM_MARK, type RunningUpstream } from "./harness/upstream.js";

type Caller = "none" | "garbage" | "machine" | Username;

interface Case {
  caller: Caller;
  path: string;
  method?: string;
  status: 200 | 401 | 403;
  /** The deny reason Portier gives (X-Portier-Reason); checked directly and where the gateway shows it. */
  reason?: string;
  why: string;
  /** What the client gets through a given gateway when that gateway refuses the request itself. */
  gateway?: Partial<Record<GatewayKind, 400>>;
}

/** Fills in GET so every case names its method. */
function withMethod(cases: Case[]): Case[] {
  return cases.map((c) => ({ ...c, method: c.method ?? "GET" }));
}

/** Expected allows: both flows, role- and "all synced"-routes, percent-encoded and decomposed paths. */
const ALLOWED: Case[] = withMethod([
  {
    caller: "machine",
    path: "/v2/ORG001/elevesJeunes",
    status: 200,
    why: "application flow, own tenant, not role-restricted",
  },
  {
    caller: "machine",
    path: "/v3/utilisateurs/moi",
    status: 200,
    why: "application flow, route without codeOrganisme",
  },
  { caller: "enseignant.jeune", path: "/v2/ORG001/elevesJeunes", status: 200, why: "accessCode flow, listed role" },
  {
    caller: "enseignant.jeune",
    path: "/v2/ORG001/elevesJeunes/E123/absences?annee=2026",
    status: 200,
    why: "listed role, query string ignored",
  },
  {
    caller: "eleve.adulte",
    path: "/v2/ORG001/elevesAdultes/A42/calendrierScolaire",
    status: 200,
    why: "listed role (Élève adulte)",
  },
  { caller: "synced.sans.role", path: "/v2/ORG001/centres", status: 200, why: "all synced" },
  {
    caller: "synced.sans.role",
    path: "/v2/ORG001/%C3%A9coles",
    status: 200,
    why: "percent-encoded UTF-8 (NFC) of /écoles",
  },
  {
    caller: "synced.sans.role",
    path: "/v2/ORG001/e%CC%81coles",
    status: 200,
    why: "decomposed é (NFD), NFC-normalised",
  },
  { caller: "enseignant.jeune", path: "/v2/ORG001/b%C3%A2timents", status: 200, why: "accented route /bâtiments" },
  { caller: "enseignant.jeune.b", path: "/v2/ORG002/centres", status: 200, why: "tenant B on its own codeOrganisme" },
]);

/** Expected denials. */
const DENIED: Case[] = withMethod([
  { caller: "none", path: "/v2/ORG001/elevesJeunes", status: 401, reason: "token_missing", why: "no token" },
  { caller: "garbage", path: "/v2/ORG001/elevesJeunes", status: 401, reason: "token_malformed", why: "garbage token" },
  {
    caller: "eleve.adulte",
    path: "/v2/ORG001/elevesJeunes",
    status: 403,
    reason: "role_not_allowed",
    why: "role not allowed",
  },
  {
    caller: "synced.sans.role",
    path: "/v2/ORG001/elevesJeunes",
    status: 403,
    reason: "role_not_allowed",
    why: "synced user without a listed role",
  },
  {
    caller: "non.synchronise",
    path: "/v2/ORG001/centres",
    status: 403,
    reason: "not_synced",
    why: "user not synced, even on an all-synced route",
  },
  {
    caller: "enseignant.jeune",
    path: "/v2/ORG001/inconnu",
    status: 403,
    reason: "route_unknown",
    why: "unknown route",
  },
  {
    caller: "machine",
    path: "/v9/nulle-part",
    status: 403,
    reason: "route_unknown",
    why: "unknown route, application flow",
  },
  {
    caller: "enseignant.jeune",
    path: "/v2/ORG001/elevesJeunes",
    method: "POST",
    status: 403,
    reason: "method_not_allowed",
    why: "wrong method (all routes are GET)",
  },
  {
    caller: "machine",
    path: "/v2/ORG001/centres",
    method: "DELETE",
    status: 403,
    reason: "method_not_allowed",
    why: "wrong method, application flow",
  },
  {
    caller: "enseignant.jeune",
    path: "/v2/ORG002/elevesJeunes",
    status: 403,
    reason: "tenant_mismatch",
    why: "tenant mismatch: tenant A token on ORG002",
  },
  {
    caller: "machine",
    path: "/v2/ORG002/centres",
    status: 403,
    reason: "tenant_mismatch",
    why: "tenant mismatch, application flow",
  },
  {
    caller: "enseignant.jeune.b",
    path: "/v2/ORG001/centres",
    status: 403,
    reason: "tenant_mismatch",
    why: "tenant mismatch: tenant B token on ORG001",
  },
  {
    caller: "enseignant.jeune",
    path: "/v2/ORG001%2Fcentres",
    status: 403,
    reason: "path_invalid",
    why: "encoded slash",
  },
  {
    caller: "enseignant.jeune",
    path: "/v2/ORG002/../ORG001/centres",
    status: 403,
    reason: "path_invalid",
    why: "dot-dot segment",
  },
  {
    caller: "enseignant.jeune",
    path: "/v2/ORG001/%FFcentres",
    status: 403,
    reason: "path_invalid",
    why: "invalid UTF-8",
  },
  {
    caller: "enseignant.jeune",
    path: "/v2/ORG001/centres%00",
    status: 403,
    reason: "path_invalid",
    why: "encoded NUL",
    gateway: { nginx: 400 },
  },
  {
    caller: "enseignant.jeune",
    path: "/v2/ORG001//centres",
    status: 403,
    reason: "path_invalid",
    why: "empty segment",
  },
  {
    caller: "enseignant.jeune",
    path: "/v2/ORG001/%2e%2e/ORG001/centres",
    status: 403,
    reason: "path_invalid",
    why: "percent-encoded dot-dot segment",
  },
  { caller: "enseignant.jeune", path: "/v2/ORG001/./centres", status: 403, reason: "path_invalid", why: "dot segment" },
  {
    caller: "enseignant.jeune",
    path: "/v2/ORG001%5Ccentres",
    status: 403,
    reason: "path_invalid",
    why: "encoded backslash",
  },
  {
    caller: "machine",
    path: "/../../v2/ORG001/centres",
    status: 403,
    reason: "path_invalid",
    why: "dot-dot above the root",
    gateway: { nginx: 400 },
  },
]);

let issuer: RunningPortier | undefined;
let service: RunningPortier | undefined;
let upstream: RunningUpstream;
const tokens = new Map<Caller, string>();

function headersFor(caller: Caller): Record<string, string> {
  if (caller === "none") return {};
  if (caller === "garbage") return bearer("not-a-jwt.at-all.garbage");
  const token = tokens.get(caller);
  if (!token) throw new Error(`no token obtained for ${caller}`);
  return bearer(token);
}

function expectedSubject(caller: Caller): { subject: string; tenant: string; roles: readonly string[] } {
  if (caller === "machine") return { subject: MACHINE_CLIENT, tenant: TENANT_A, roles: [] };
  if (caller === "none" || caller === "garbage") throw new Error(`${caller} is never allowed`);
  const user = USERS[caller];
  return { subject: user.sub, tenant: user.tenant, roles: user.roles };
}

function splitRoles(value: string | undefined): string[] {
  return (value ?? "").split(/[\s,]+/).filter(Boolean);
}

function describeResponse(res: RawResponse, gateway?: RunningGateway): string {
  return (
    `status ${res.status}, headers ${JSON.stringify(res.headers)}, body ${res.body.slice(0, 500)}` +
    (gateway && res.status >= 500 ? `\n${gateway.logs()}` : "") +
    (service ? `\n--- portier serve (tail) ---\n${service.proc.output().slice(-2000)}` : "")
  );
}

describe("Portier behind real gateways (issuer and service as processes)", () => {
  beforeAll(async () => {
    upstream = await startUpstream();
    issuer = await startIssuerProcess();
    service = await startServiceProcess(issuer.url);
    tokens.set("machine", await machineToken(issuer.url));
    for (const username of Object.keys(USERS) as Username[]) {
      tokens.set(username, (await userToken(issuer.url, username)).accessToken);
    }
  }, 120_000);

  afterAll(async () => {
    await service?.stop();
    await issuer?.stop();
    await upstream?.close();
  });

  describe("tokens from the issuer with openid-client", () => {
    it("both flows produced access tokens (client credentials, and authorization code + PKCE per user)", () => {
      expect([...tokens.keys()].sort()).toEqual(["machine", ...Object.keys(USERS)].sort());
      for (const token of tokens.values()) expect(token.split(".")).toHaveLength(3);
    });
  });

  describe("/forward-auth/<gateway> itself answers only 200, 401 or 403", () => {
    const odd: Array<{ why: string; endpoint?: string; headers: (t: string) => Record<string, string> }> = [
      {
        why: "nginx style, allowed",
        headers: (t) => ({ ...bearer(t), "x-original-method": "GET", "x-original-uri": "/v2/ORG001/centres" }),
      },
      {
        why: "caddy style, allowed",
        endpoint: "/forward-auth/caddy",
        headers: (t) => ({
          ...bearer(t),
          "x-forwarded-method": "GET",
          "x-forwarded-uri": "/v2/ORG001/centres",
          "x-forwarded-host": "api.example",
        }),
      },
      { why: "no original URI", headers: (t) => ({ ...bearer(t), "x-original-method": "GET" }) },
      { why: "no original method", headers: (t) => ({ ...bearer(t), "x-original-uri": "/v2/ORG001/centres" }) },
      { why: "no headers at all", headers: () => ({}) },
      {
        why: "relative original URI",
        headers: (t) => ({ ...bearer(t), "x-original-method": "GET", "x-original-uri": "v2/ORG001/centres" }),
      },
      {
        why: "absolute-form original URI",
        headers: (t) => ({
          ...bearer(t),
          "x-original-method": "GET",
          "x-original-uri": "http://evil.example/v2/ORG001/centres",
        }),
      },
      {
        why: "odd method",
        headers: (t) => ({ ...bearer(t), "x-original-method": "G E T", "x-original-uri": "/v2/ORG001/centres" }),
      },
      {
        why: "Basic credentials",
        headers: () => ({
          authorization: "Basic dXNlcjpwYXNz",
          "x-original-method": "GET",
          "x-original-uri": "/v2/ORG001/centres",
        }),
      },
      {
        why: "empty bearer",
        headers: () => ({
          authorization: "Bearer ",
          "x-original-method": "GET",
          "x-original-uri": "/v2/ORG001/centres",
        }),
      },
      {
        why: "very long URI",
        headers: (t) => ({
          ...bearer(t),
          "x-original-method": "GET",
          "x-original-uri": `/v2/ORG001/${"a".repeat(6000)}`,
        }),
      },
    ];
    it.each(odd)("$why", async ({ why, endpoint, headers }) => {
      const res = await send(service!.url, endpoint ?? "/forward-auth/nginx", {
        headers: headers(tokens.get("enseignant.jeune")!),
      });
      expect([200, 401, 403], describeResponse(res)).toContain(res.status);
      if (res.status === 401) expect(res.headers["www-authenticate"], why).toMatch(/^Bearer\b/);
      if (why.endsWith("allowed")) expect(res.status, describeResponse(res)).toBe(200);
      if (why.startsWith("no ") || why.includes("URI")) expect(res.status, describeResponse(res)).not.toBe(200);
    });
  });

  describe("the same denials asked of /forward-auth/nginx directly: status and reason", () => {
    it.each(DENIED)(
      "$status $reason: $caller $method $path ($why)",
      async ({ caller, path, method, status, reason }) => {
        const res = await send(service!.url, "/forward-auth/nginx", {
          headers: { ...headersFor(caller), "x-original-method": method ?? "GET", "x-original-uri": path },
        });
        expect(res.status, describeResponse(res)).toBe(status);
        expect(res.headers["x-portier-reason"], describeResponse(res)).toBe(reason);
        expect(res.headers["x-portier-decision-id"]).toMatch(/\S/);
        if (status === 401) expect(res.headers["www-authenticate"], describeResponse(res)).toMatch(/^Bearer\b/);
        for (const name of ["x-portier-subject", "x-portier-tenant", "x-portier-roles"])
          expect(res.headers, name).not.toHaveProperty(name);
      },
    );
  });

  describeThroughGateways(
    (kind) => `through ${kind}`,
    () => ({ authPort: service!.port, upstreamPort: upstream.port }),
    (kind, gateway) => {
      it.each(ALLOWED)("200 $caller $method $path ($why)", async ({ caller, path, method }) => {
        upstream.seen.length = 0;
        const res = await send(gateway().url, path, { method: method ?? "GET", headers: headersFor(caller) });
        expect(res.status, describeResponse(res, gateway())).toBe(200);
        expect(JSON.parse(res.body)).toMatchObject({ upstream: UPSTREAM_MARK, method: method ?? "GET", path });
        expect(upstream.seen).toHaveLength(1);
        const received = upstream.seen[0]!.portier;
        const expected = expectedSubject(caller);
        expect(received["x-portier-subject"]).toBe(expected.subject);
        expect(received["x-portier-tenant"]).toBe(expected.tenant);
        expect(received["x-portier-decision-id"]).toMatch(/\S/);
        expect(splitRoles(received["x-portier-roles"])).toEqual(expect.arrayContaining([...expected.roles]));
        // Caddy 2.6 turns a header missing from the auth answer into its placeholder's literal text.
        for (const [name, value] of Object.entries(received)) expect(value, name).not.toMatch(/\{http\./);
      });

      it.each(DENIED)(
        "$status $caller $method $path ($why)",
        async ({ caller, path, method, status, reason, gateway: refusedBy }) => {
          upstream.seen.length = 0;
          const res = await send(gateway().url, path, { method: method ?? "GET", headers: headersFor(caller) });
          // nginx itself answers 400 to an encoded NUL or a path above the root, before auth_request.
          expect(res.status, describeResponse(res, gateway())).toBe(refusedBy?.[kind] ?? status);
          expect(upstream.seen, "the upstream must not be reached").toHaveLength(0);
          if (res.status === 401) expect(res.headers["www-authenticate"], describeResponse(res)).toMatch(/^Bearer\b/);
          // Caddy hands the client Portier's whole deny answer; nginx keeps only the status (and
          // WWW-Authenticate on 401).
          if (kind === "caddy" && res.status === status) expect(res.headers["x-portier-reason"]).toBe(reason);
        },
      );

      it("a POST with a body is judged on its method, and the body never reaches the upstream", async () => {
        upstream.seen.length = 0;
        const res = await send(gateway().url, "/v2/ORG001/elevesJeunes", {
          method: "POST",
          headers: { ...headersFor("enseignant.jeune"), "content-type": "application/json" },
          body: JSON.stringify({ nom: "x".repeat(10_000) }),
        });
        expect(res.status, describeResponse(res, gateway())).toBe(403);
        expect(upstream.seen).toHaveLength(0);
      });

      it("a forged X-Portier-* header from the client never reaches the upstream", async () => {
        upstream.seen.length = 0;
        const forged = {
          "x-portier-subject": "forged",
          "x-portier-tenant": "forged",
          "x-portier-roles": "directeur_jeune",
          "x-portier-decision-id": "forged",
        };
        const res = await send(gateway().url, "/v2/ORG001/centres", {
          headers: { ...headersFor("machine"), ...forged },
        });
        expect(res.status, describeResponse(res, gateway())).toBe(200);
        const received = upstream.seen[0]!.portier;
        for (const [name, value] of Object.entries(forged)) expect(received[name], name).not.toBe(value);
        expect(received["x-portier-subject"]).toBe(MACHINE_CLIENT);
      });

      it("each allowed call gets its own decision id", async () => {
        upstream.seen.length = 0;
        for (let i = 0; i < 3; i++) {
          const res = await send(gateway().url, "/v2/ORG001/centres", { headers: headersFor("enseignant.jeune") });
          expect(res.status).toBe(200);
        }
        const ids = new Set(upstream.seen.map((s) => s.portier["x-portier-decision-id"]));
        expect(ids.size).toBe(3);
      });
    },
  );
});
