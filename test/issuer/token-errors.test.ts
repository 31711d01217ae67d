/**
 * Negative protocol tests of POST /connect/token, one table: each case asserts the RFC 6749 5.2 error
 * code and HTTP status (and WWW-Authenticate for client_secret_basic failures).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_CLIENTS_FILE, startIssuer, type RunningIssuer } from "../../src/issuer/index.js";
import {
  MACHINE_CLIENT,
  MACHINE_SECRET,
  REDIRECT_URI,
  WEB_CLIENT,
  basicAuth,
  obtainCode,
  pkcePair,
  tokenRequest,
} from "./helpers.js";

let clock = Math.floor(Date.now() / 1000);
let running: RunningIssuer;
let dir: string;
/** A second user-flow client, to present a code issued to the demo web client. */
const OTHER_WEB_CLIENT = "other-web";

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "portier-issuer-"));
  const clients = JSON.parse(readFileSync(DEFAULT_CLIENTS_FILE, "utf8")) as { clients: unknown[] };
  clients.clients.push({
    client_id: OTHER_WEB_CLIENT,
    type: "public",
    grant_types: ["authorization_code"],
    redirect_uris: [REDIRECT_URI],
    scopes: ["openid"],
  });
  writeFileSync(join(dir, "clients.json"), JSON.stringify(clients));
  running = await startIssuer({ now: () => clock, codeTtlSec: 300, clientsFile: join(dir, "clients.json") });
});
afterAll(async () => {
  await running.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Case {
  name: string;
  /** Builds the token request (may obtain a code first). */
  request: (url: string) => Promise<{ params: Record<string, string>; headers?: Record<string, string> }>;
  status: number;
  error: string;
  wwwAuthenticate?: boolean;
}

async function codeExchange(url: string, change: (p: Record<string, string>) => void = () => {}) {
  const { code, verifier } = await obtainCode(url);
  const params: Record<string, string> = {
    grant_type: "authorization_code",
    client_id: WEB_CLIENT,
    redirect_uri: REDIRECT_URI,
    code,
    code_verifier: verifier,
  };
  change(params);
  return { params };
}

const cases: Case[] = [
  {
    name: "missing PKCE verifier",
    status: 400,
    error: "invalid_request",
    request: (u) => codeExchange(u, (p) => delete p["code_verifier"]),
  },
  {
    name: "wrong PKCE verifier",
    status: 400,
    error: "invalid_grant",
    request: (u) => codeExchange(u, (p) => (p["code_verifier"] = pkcePair().verifier)),
  },
  {
    name: "malformed PKCE verifier",
    status: 400,
    error: "invalid_request",
    request: (u) => codeExchange(u, (p) => (p["code_verifier"] = "short")),
  },
  {
    name: "replayed code",
    status: 400,
    error: "invalid_grant",
    request: async (u) => {
      const first = await codeExchange(u);
      const ok = await tokenRequest(u, first.params);
      expect(ok.status).toBe(200);
      return first;
    },
  },
  {
    name: "wrong redirect URI",
    status: 400,
    error: "invalid_grant",
    request: (u) => codeExchange(u, (p) => (p["redirect_uri"] = "http://localhost:8400/callback")),
  },
  {
    name: "missing redirect URI",
    status: 400,
    error: "invalid_request",
    request: (u) => codeExchange(u, (p) => delete p["redirect_uri"]),
  },
  {
    name: "unknown code",
    status: 400,
    error: "invalid_grant",
    request: (u) => codeExchange(u, (p) => (p["code"] = "not-a-code")),
  },
  {
    name: "expired code",
    status: 400,
    error: "invalid_grant",
    request: async (u) => {
      const exchange = await codeExchange(u);
      clock += 301;
      return exchange;
    },
  },
  {
    name: "code issued to another client",
    status: 400,
    error: "invalid_grant",
    request: (u) => codeExchange(u, (p) => (p["client_id"] = OTHER_WEB_CLIENT)),
  },
  {
    name: "scope wider than authorized",
    status: 400,
    error: "invalid_scope",
    request: (u) => codeExchange(u, (p) => (p["scope"] = "openid admin")),
  },
  {
    name: "wrong secret (client_secret_post)",
    status: 401,
    error: "invalid_client",
    request: async () => ({
      params: {
        grant_type: "client_credentials",
        client_id: MACHINE_CLIENT,
        client_secret: "wrong-secret",
        scope: "apiclients",
      },
    }),
  },
  {
    name: "wrong secret (client_secret_basic)",
    status: 401,
    error: "invalid_client",
    wwwAuthenticate: true,
    request: async () => ({
      params: { grant_type: "client_credentials", scope: "apiclients" },
      headers: { Authorization: basicAuth(MACHINE_CLIENT, "wrong-secret") },
    }),
  },
  {
    name: "missing secret",
    status: 401,
    error: "invalid_client",
    request: async () => ({
      params: { grant_type: "client_credentials", client_id: MACHINE_CLIENT, scope: "apiclients" },
    }),
  },
  {
    name: "unknown client",
    status: 401,
    error: "invalid_client",
    request: async () => ({
      params: {
        grant_type: "client_credentials",
        client_id: "nobody",
        client_secret: "whatever-secret",
        scope: "apiclients",
      },
    }),
  },
  {
    name: "unknown client (client_secret_basic)",
    status: 401,
    error: "invalid_client",
    wwwAuthenticate: true,
    request: async () => ({
      params: { grant_type: "client_credentials" },
      headers: { Authorization: basicAuth("nobody", "whatever-secret") },
    }),
  },
  {
    name: "two client authentication methods",
    status: 400,
    error: "invalid_request",
    request: async () => ({
      params: { grant_type: "client_credentials", client_secret: MACHINE_SECRET },
      headers: { Authorization: basicAuth(MACHINE_CLIENT, MACHINE_SECRET) },
    }),
  },
  {
    name: "unsupported grant type",
    status: 400,
    error: "unsupported_grant_type",
    request: async () => ({
      params: {
        grant_type: "password",
        client_id: MACHINE_CLIENT,
        client_secret: MACHINE_SECRET,
        username: "x",
        password: "y",
      },
    }),
  },
  {
    name: "missing grant type",
    status: 400,
    error: "invalid_request",
    request: async () => ({ params: { client_id: MACHINE_CLIENT, client_secret: MACHINE_SECRET } }),
  },
  {
    name: "grant not allowed for the client (public client, client_credentials)",
    status: 400,
    error: "unauthorized_client",
    request: async () => ({ params: { grant_type: "client_credentials", client_id: WEB_CLIENT, scope: "apiclients" } }),
  },
  {
    name: "grant not allowed for the client (machine client, authorization_code)",
    status: 400,
    error: "unauthorized_client",
    request: async () => ({
      params: {
        grant_type: "authorization_code",
        client_id: MACHINE_CLIENT,
        client_secret: MACHINE_SECRET,
        code: "x",
        redirect_uri: REDIRECT_URI,
        code_verifier: pkcePair().verifier,
      },
    }),
  },
  {
    name: "bad scope (client credentials)",
    status: 400,
    error: "invalid_scope",
    request: async () => ({
      params: {
        grant_type: "client_credentials",
        client_id: MACHINE_CLIENT,
        client_secret: MACHINE_SECRET,
        scope: "openid",
      },
    }),
  },
  {
    name: "parameter repeated",
    status: 400,
    error: "invalid_request",
    request: async () => ({
      params: {
        grant_type: "client_credentials",
        client_id: MACHINE_CLIENT,
        client_secret: MACHINE_SECRET,
        scope: "apiclients",
      },
    }),
  },
];

describe("token endpoint errors (RFC 6749 5.2)", () => {
  it.each(cases.filter((c) => c.name !== "parameter repeated"))("$name -> $status $error", async (c) => {
    const { params, headers } = await c.request(running.url);
    const res = await tokenRequest(running.url, params, headers ? { headers } : {});
    expect(res.status).toBe(c.status);
    expect(res.body["error"]).toBe(c.error);
    expect(typeof res.body["error_description"]).toBe("string");
    expect(res.body).not.toHaveProperty("access_token");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("pragma")).toBe("no-cache");
    if (c.wwwAuthenticate) expect(res.headers.get("www-authenticate")).toMatch(/^Basic /);
  });

  it("parameter repeated -> 400 invalid_request", async () => {
    const body =
      "grant_type=client_credentials&scope=apiclients&scope=apiclients" +
      "&client_id=portier-demo-machine&client_secret=portier-demo-secret";
    const res = await fetch(`${running.url}/connect/token`, {
      method: "POST",
      body,
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe("invalid_request");
  });

  it("a replayed code revokes the access token issued from it", async () => {
    const { params } = await codeExchange(running.url);
    const first = await tokenRequest(running.url, params);
    const access = first.body["access_token"] as string;
    const before = await fetch(`${running.url}/connect/userinfo`, { headers: { Authorization: `Bearer ${access}` } });
    expect(before.status).toBe(200);
    expect((await tokenRequest(running.url, params)).body["error"]).toBe("invalid_grant");
    const after = await fetch(`${running.url}/connect/userinfo`, { headers: { Authorization: `Bearer ${access}` } });
    expect(after.status).toBe(401);
    expect(after.headers.get("www-authenticate")).toContain('error="invalid_token"');
  });

  it("unknown endpoints are 404 and malformed bodies are invalid_request", async () => {
    expect((await fetch(`${running.url}/connect/nothing`)).status).toBe(404);
    const res = await fetch(`${running.url}/connect/token`, {
      method: "POST",
      body: "%",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(400);
  });
});

describe("token endpoint success paths beyond openid-client", () => {
  it("accepts the spec's query-string parameters (client credentials)", async () => {
    const res = await tokenRequest(
      running.url,
      {
        grant_type: "client_credentials",
        client_id: MACHINE_CLIENT,
        client_secret: MACHINE_SECRET,
        scope: "apiclients",
      },
      { query: true },
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: "Bearer", expires_in: 3600, scope: "apiclients" });
    expect(res.headers.get("cache-control")).toBe("no-store");
  });

  it("accepts the spec's query-string parameters (authorization code)", async () => {
    const { params } = await codeExchange(running.url, (p) => (p["scope"] = "openid email profile apiclients"));
    const res = await tokenRequest(running.url, params, { query: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      token_type: "Bearer",
      expires_in: 3600,
      scope: "openid email profile apiclients",
    });
    expect(typeof res.body["id_token"]).toBe("string");
  });

  it("a narrower scope at the token request narrows the tokens", async () => {
    const { params } = await codeExchange(running.url, (p) => (p["scope"] = "apiclients"));
    const res = await tokenRequest(running.url, params);
    expect(res.status).toBe(200);
    expect(res.body["scope"]).toBe("apiclients");
    expect(res.body).not.toHaveProperty("id_token");
  });

  it("defaults the client credentials scope to apiclients", async () => {
    const res = await tokenRequest(
      running.url,
      { grant_type: "client_credentials" },
      { headers: { Authorization: basicAuth(MACHINE_CLIENT, MACHINE_SECRET) } },
    );
    expect(res.status).toBe(200);
    expect(res.body["scope"]).toBe("apiclients");
  });
});
