/**
 * The browser side of `portier dev`: a small loopback web app for the sample web client (portier-demo-web),
 * a relying party built on openid-client. GET / starts an authorization code flow with a fresh state, nonce
 * and PKCE S256 pair and redirects to the issuer; GET /callback takes the state it issued (single use, within
 * its lifetime), lets openid-client exchange the code and check state, nonce and the ID token's claims, and
 * shows the access token, the ID token's claims, curl lines that use the token and, given `access`
 * (dev-access.ts), the routes this user may call and those refused with the reason. Development only.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import * as oidc from "openid-client";
import { messageOf } from "../errors/caught.js";
import type { AccessOfToken, RouteAccess } from "./dev-access.js";

const DEV_WEB_CLIENT = "portier-demo-web";
const SCOPE = "openid profile email apiclients";
/** A flow not finished within this time is forgotten (its state is then refused). */
const FLOW_TTL_MS = 10 * 60_000;
/** At most this many flows started and not finished; the oldest is dropped beyond it. */
const MAX_PENDING = 100;
const TOKEN_TIMEOUT_MS = 10_000;
const MAX_TOKEN_RESPONSE = 64 * 1024;
/** A request path of the sample data that the sample teacher may call (shown in the curl lines). */
const SAMPLE_PATH = "/v2/ORG001/elevesJeunes/42/absences";

export interface DevCallbackOptions {
  port: number;
  host?: string;
  issuerUrl: string;
  serviceUrl: string;
  /** The scopes to ask for (default: openid profile email apiclients, the spec's). */
  scope?: string;
  /** The routes the signed-in user may call, asked of the decision service (shown as two tables). */
  access?: AccessOfToken;
}

export interface RunningDevCallback {
  /** Where to point the browser (GET / starts a sign-in). */
  url: string;
  redirectUri: string;
  close(): Promise<void>;
}

interface PendingFlow {
  verifier: string;
  nonce: string;
  started: number;
}

/** fetch with the token endpoint's answer read up to MAX_TOKEN_RESPONSE bytes (openid-client has no cap of its own). */
const boundedFetch: oidc.CustomFetch = async (url, options) => {
  const res = await fetch(url, {
    method: options.method,
    headers: options.headers,
    redirect: options.redirect,
    signal: options.signal ?? null,
    body: options.body ?? null,
  });
  const text = await res.text();
  if (text.length > MAX_TOKEN_RESPONSE)
    throw new Error(`HTTP ${res.status}, answer larger than ${MAX_TOKEN_RESPONSE} bytes`);
  return new Response(text, { status: res.status, statusText: res.statusText, headers: res.headers });
};

/**
 * The issuer's endpoints as `portier issuer` serves them, without a discovery round trip: the sign-in page
 * starts even while the issuer is unreachable (the code exchange then says so).
 */
function clientConfiguration(issuerUrl: string): oidc.Configuration {
  const config = new oidc.Configuration(
    {
      issuer: issuerUrl,
      authorization_endpoint: `${issuerUrl}/connect/authorize`,
      token_endpoint: `${issuerUrl}/connect/token`,
    },
    DEV_WEB_CLIENT,
    undefined,
    oidc.None(),
  );
  // Loopback http only: `portier dev` runs the issuer on 127.0.0.1.
  oidc.allowInsecureRequests(config);
  config.timeout = TOKEN_TIMEOUT_MS / 1000;
  config[oidc.customFetch] = boundedFetch;
  return config;
}

/** What the token endpoint failure says, in one line (the issuer's error code and description when it gave them). */
function exchangeError(err: unknown, issuerUrl: string): string {
  if (err instanceof oidc.ResponseBodyError)
    return `HTTP ${err.status} ${err.error} ${err.error_description ?? ""}`.trim();
  const message = err instanceof Error ? err.message : String(err);
  const cause = err instanceof Error && err.cause instanceof Error ? ` (${err.cause.message})` : "";
  return err instanceof TypeError || (err instanceof Error && err.name === "TimeoutError")
    ? `cannot reach ${issuerUrl}: ${message}${cause}`
    : `${message}${cause}`;
}

export async function startDevCallback(options: DevCallbackOptions): Promise<RunningDevCallback> {
  const host = options.host ?? "127.0.0.1";
  const pending = new Map<string, PendingFlow>();
  const config = clientConfiguration(options.issuerUrl);
  let redirectUri = "";
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) =>
      sendPage(res, 500, "Error", `<p class="error">${escapeHtml(messageOf(err))}</p>${again}`),
    );
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://callback.invalid");
    if (req.method !== "GET" && req.method !== "HEAD")
      return sendPage(res, 405, "Method not allowed", `<p>Only GET.</p>`);
    if (url.pathname === "/") {
      res.writeHead(302, { Location: await startFlow(), "Cache-Control": "no-store" }).end();
      return;
    }
    if (url.pathname === "/callback") return callback(url, res);
    return sendPage(res, 404, "Not found", `<p>Nothing here.</p>${again}`);
  }

  async function startFlow(): Promise<string> {
    const now = Date.now();
    for (const [key, flow] of pending)
      if (now - flow.started > FLOW_TTL_MS || pending.size >= MAX_PENDING) pending.delete(key);
    const state = oidc.randomState();
    const flow: PendingFlow = { verifier: oidc.randomPKCECodeVerifier(), nonce: oidc.randomNonce(), started: now };
    pending.set(state, flow);
    const authorize = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: options.scope ?? SCOPE,
      state,
      nonce: flow.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(flow.verifier),
      code_challenge_method: "S256",
    });
    return authorize.href;
  }

  async function callback(url: URL, res: ServerResponse): Promise<void> {
    const params = url.searchParams;
    const state = params.get("state") ?? "";
    const flow = pending.get(state);
    pending.delete(state);
    if (!flow || Date.now() - flow.started > FLOW_TTL_MS) {
      return sendPage(
        res,
        400,
        "Sign-in refused",
        `<p class="error">Unknown, expired or already used <code>state</code>: ` +
          `this answer does not belong to a sign-in started here.</p>${again}`,
      );
    }
    const error = params.get("error");
    if (error) {
      const description = params.get("error_description") ?? "";
      return sendPage(
        res,
        400,
        "Sign-in refused",
        `<p class="error">The issuer answered <code>${escapeHtml(error)}</code>` +
          `${description ? `: ${escapeHtml(description)}` : ""}.</p>${again}`,
      );
    }
    if (!params.get("code"))
      return sendPage(
        res,
        400,
        "Sign-in refused",
        `<p class="error">The callback has no <code>code</code>.</p>${again}`,
      );

    // The callback as the issuer sent it, on the redirect URI registered for this flow.
    const current = new URL(`${redirectUri}${url.search}`);
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(config, current, {
        pkceCodeVerifier: flow.verifier,
        expectedState: state,
        expectedNonce: flow.nonce,
        idTokenExpected: true,
      });
    } catch (err) {
      return sendPage(
        res,
        502,
        "Code exchange failed",
        `<p class="error">The token endpoint answered: ` +
          `${escapeHtml(exchangeError(err, options.issuerUrl))}</p>${again}`,
      );
    }
    const claims = tokens.claims();
    if (!claims)
      return sendPage(
        res,
        502,
        "Code exchange failed",
        `<p class="error">The token endpoint answered without an ID token.</p>${again}`,
      );
    const access = await accessSection(tokens.access_token, options.access);
    sendPage(res, 200, "Signed in", tokenPage(tokens.access_token, { ...claims }, options.serviceUrl, access));
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, host, () => {
      server.off("error", reject);
      const { port } = server.address() as AddressInfo;
      redirectUri = `http://${host.includes(":") ? `[${host}]` : host}:${port}/callback`;
      resolve();
    });
  });
  return { url: redirectUri.replace(/callback$/, ""), redirectUri, close: () => closeServer(server) };
}

const again = `<p><a href="/">Sign in again</a></p>`;

/**
 * curl lines that call the decision service with this access token (the token is base64url and dots: safe in
 * single quotes).
 */
function tokenCurlLines(serviceUrl: string, accessToken: string): { decide: string; forwardAuth: string } {
  const body = JSON.stringify({ method: "GET", path: SAMPLE_PATH, token: accessToken });
  return {
    decide: `curl -s -X POST ${serviceUrl}/decide -H 'content-type: application/json' -d '${body}'`,
    forwardAuth:
      `curl -s -i ${serviceUrl}/forward-auth/nginx -H 'X-Original-Method: GET' ` +
      `-H 'X-Original-URI: ${SAMPLE_PATH}' -H 'Authorization: Bearer ${accessToken}'`,
  };
}

/** The two tables of what this user may call, or why they could not be asked (the page still shows the token). */
async function accessSection(accessToken: string, access: AccessOfToken | undefined): Promise<string> {
  if (!access) return "";
  let rows: RouteAccess[];
  try {
    rows = await access(accessToken);
  } catch (err) {
    const why = escapeHtml(messageOf(err));
    return `<h2>What you may call</h2>\n<p class="error">The decision service could not be asked: ${why}</p>`;
  }
  const allowed = rows.filter((r) => r.allow);
  const refused = rows.filter((r) => !r.allow);
  const cell = (r: RouteAccess) =>
    `<td><code>${escapeHtml(r.method)}</code></td>` +
    `<td><code>${escapeHtml(r.template)}</code></td><td><code>${escapeHtml(r.path)}</code></td>`;
  const table = (id: string, head: string, body: string[]) =>
    body.length === 0
      ? `<p id="${id}">None.</p>`
      : `<table id="${id}"><thead><tr>${head}</tr></thead><tbody>\n${body.join("\n")}\n</tbody></table>`;
  return `<h2>What you may call</h2>
<p>Every route of the loaded policy with each method it answers (HEAD follows GET), asked of the decision service
with this token (a route with <code>{codeOrganisme}</code> is shown with your own organisation's code when you may
call it there).</p>
<h3>Allowed: ${allowed.length} of ${rows.length} routes and methods</h3>
${table(
  "routes-allowed",
  "<th>Method</th><th>Route</th><th>Path asked</th>",
  allowed.map((r) => `<tr>${cell(r)}</tr>`),
)}
<h3>Refused: ${refused.length} of ${rows.length} routes and methods</h3>
${table(
  "routes-refused",
  "<th>Method</th><th>Route</th><th>Path asked</th><th>Reason</th><th>Why</th>",
  refused.map(
    (r) => `<tr>${cell(r)}<td><code>${escapeHtml(r.reason)}</code></td><td>${escapeHtml(r.message)}</td></tr>`,
  ),
)}`;
}

function tokenPage(accessToken: string, claims: Record<string, unknown>, serviceUrl: string, access: string): string {
  const curl = tokenCurlLines(serviceUrl, accessToken);
  // In this template a backslash ending a line continues it: the page keeps the line unbroken.
  return `<p class="warn">Development only: these tokens are real for the local issuer; \
do not paste them anywhere else.</p>
${access}
<h2>Access token</h2>
<pre id="access-token">${escapeHtml(accessToken)}</pre>
<h2>ID token claims (checked by openid-client: issuer, audience, nonce, expiry)</h2>
<pre id="id-claims">${escapeHtml(JSON.stringify(claims, null, 2))}</pre>
<h2>Ask Portier</h2>
<p>A decision (change <code>path</code> to try others):</p>
<pre id="curl-decide">${escapeHtml(curl.decide)}</pre>
<p>The same through the nginx forward-auth endpoint:</p>
<pre id="curl-forward-auth">${escapeHtml(curl.forwardAuth)}</pre>
${again}`;
}

function escapeHtml(value: string): string {
  return value.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c,
  );
}

function sendPage(res: ServerResponse, status: number, title: string, body: string): void {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Portier dev: ${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}
pre{white-space:pre-wrap;word-break:break-all;background:#f4f4f4;padding:.5rem}.error{color:#a40000}
.warn{background:#fff3cd;border:1px solid #e0c36c;padding:.5rem 1rem}
table{border-collapse:collapse;margin-bottom:1rem;width:100%}
td,th{border:1px solid #ccc;padding:.2rem .5rem;text-align:left;overflow-wrap:anywhere}
#routes-allowed th{background:#e6f4ea}#routes-refused th{background:#fce8e6}
#routes-refused td:nth-child(3){overflow-wrap:normal}</style></head>
<body><h1>${escapeHtml(title)}</h1>
${body}</body></html>`;
  res
    .writeHead(status, {
      "Content-Type": "text/html; charset=utf-8",
      "Cache-Control": "no-store",
      "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
      "Referrer-Policy": "no-referrer",
      "X-Frame-Options": "DENY",
    })
    .end(html);
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((err) => (err ? reject(err) : resolve()));
    server.closeAllConnections();
  });
}
