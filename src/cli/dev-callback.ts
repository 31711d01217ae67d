/**
 * The browser side of `portier dev`: a small loopback web app for the sample web client (portier-demo-web).
 * GET / starts an authorization code flow with a fresh state, nonce and PKCE S256 pair and redirects to the
 * issuer; GET /callback checks the state it issued, exchanges the code with the verifier, and shows the
 * access token, the ID token's claims (decoded for display only) and curl lines that use the token.
 * Development only.
 */
import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

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

export async function startDevCallback(options: DevCallbackOptions): Promise<RunningDevCallback> {
  const host = options.host ?? "127.0.0.1";
  const pending = new Map<string, PendingFlow>();
  let redirectUri = "";
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => sendPage(res, 500, "Error", `<p class="error">${escapeHtml((err as Error).message)}</p>${again}`));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://callback.invalid");
    if (req.method !== "GET" && req.method !== "HEAD") return sendPage(res, 405, "Method not allowed", `<p>Only GET.</p>`);
    if (url.pathname === "/") {
      res.writeHead(302, { Location: startFlow(), "Cache-Control": "no-store" }).end();
      return;
    }
    if (url.pathname === "/callback") return callback(url.searchParams, res);
    return sendPage(res, 404, "Not found", `<p>Nothing here.</p>${again}`);
  }

  function startFlow(): string {
    const now = Date.now();
    for (const [key, flow] of pending) if (now - flow.started > FLOW_TTL_MS || pending.size >= MAX_PENDING) pending.delete(key);
    const state = randomBytes(24).toString("base64url");
    const flow: PendingFlow = { verifier: randomBytes(32).toString("base64url"), nonce: randomBytes(24).toString("base64url"), started: now };
    pending.set(state, flow);
    const authorize = new URL(`${options.issuerUrl}/connect/authorize`);
    for (const [k, v] of Object.entries({
      response_type: "code",
      client_id: DEV_WEB_CLIENT,
      redirect_uri: redirectUri,
      scope: SCOPE,
      state,
      nonce: flow.nonce,
      code_challenge: createHash("sha256").update(flow.verifier).digest("base64url"),
      code_challenge_method: "S256",
    }))
      authorize.searchParams.set(k, v);
    return authorize.href;
  }

  async function callback(params: URLSearchParams, res: ServerResponse): Promise<void> {
    const state = params.get("state") ?? "";
    const flow = pending.get(state);
    pending.delete(state);
    if (!flow || Date.now() - flow.started > FLOW_TTL_MS) {
      return sendPage(res, 400, "Sign-in refused", `<p class="error">Unknown, expired or already used <code>state</code>: this answer does not belong to a sign-in started here.</p>${again}`);
    }
    const error = params.get("error");
    if (error) {
      const description = params.get("error_description") ?? "";
      return sendPage(res, 400, "Sign-in refused", `<p class="error">The issuer answered <code>${escapeHtml(error)}</code>${description ? `: ${escapeHtml(description)}` : ""}.</p>${again}`);
    }
    const code = params.get("code");
    if (!code) return sendPage(res, 400, "Sign-in refused", `<p class="error">The callback has no <code>code</code>.</p>${again}`);

    const tokens = await exchange(code, flow.verifier);
    if ("error" in tokens) return sendPage(res, 502, "Code exchange failed", `<p class="error">The token endpoint answered: ${escapeHtml(tokens.error)}</p>${again}`);
    const claims = decodePayload(tokens.idToken);
    if (claims?.["nonce"] !== flow.nonce) return sendPage(res, 502, "Code exchange failed", `<p class="error">The ID token's nonce is not the one sent with this sign-in.</p>${again}`);
    sendPage(res, 200, "Signed in", tokenPage(tokens.accessToken, claims, options.serviceUrl));
  }

  async function exchange(code: string, verifier: string): Promise<{ accessToken: string; idToken: string } | { error: string }> {
    let res: Response;
    try {
      res = await fetch(`${options.issuerUrl}/connect/token`, {
        method: "POST",
        body: new URLSearchParams({ grant_type: "authorization_code", client_id: DEV_WEB_CLIENT, code, redirect_uri: redirectUri, code_verifier: verifier }),
        signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS),
      });
    } catch (err) {
      return { error: `cannot reach ${options.issuerUrl}: ${(err as Error).message}` };
    }
    const text = await res.text();
    if (text.length > MAX_TOKEN_RESPONSE) return { error: `HTTP ${res.status}, answer larger than ${MAX_TOKEN_RESPONSE} bytes` };
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // reported below
    }
    if (!res.ok) return { error: `HTTP ${res.status} ${String(body["error"] ?? "")} ${String(body["error_description"] ?? "")}`.trim() };
    const accessToken = body["access_token"];
    const idToken = body["id_token"];
    if (typeof accessToken !== "string" || typeof idToken !== "string") return { error: `HTTP ${res.status} without access_token and id_token` };
    return { accessToken, idToken };
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

/** The payload of a JWT, decoded without verification: for display only. */
function decodePayload(jwt: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(jwt.split(".")[1] ?? "", "base64url").toString("utf8"));
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** curl lines that call the decision service with this access token (the token is base64url and dots: safe in single quotes). */
function tokenCurlLines(serviceUrl: string, accessToken: string): { decide: string; forwardAuth: string } {
  const body = JSON.stringify({ method: "GET", path: SAMPLE_PATH, token: accessToken });
  return {
    decide: `curl -s -X POST ${serviceUrl}/decide -H 'content-type: application/json' -d '${body}'`,
    forwardAuth: `curl -s -i ${serviceUrl}/forward-auth/nginx -H 'X-Original-Method: GET' -H 'X-Original-URI: ${SAMPLE_PATH}' -H 'Authorization: Bearer ${accessToken}'`,
  };
}

function tokenPage(accessToken: string, claims: Record<string, unknown>, serviceUrl: string): string {
  const curl = tokenCurlLines(serviceUrl, accessToken);
  return `<p class="warn">Development only: these tokens are real for the local issuer; do not paste them anywhere else.</p>
<h2>Access token</h2>
<pre id="access-token">${escapeHtml(accessToken)}</pre>
<h2>ID token claims (decoded for display, not verified here)</h2>
<pre id="id-claims">${escapeHtml(JSON.stringify(claims, null, 2))}</pre>
<h2>Ask Portier</h2>
<p>A decision (change <code>path</code> to try others):</p>
<pre id="curl-decide">${escapeHtml(curl.decide)}</pre>
<p>The same through the nginx forward-auth endpoint:</p>
<pre id="curl-forward-auth">${escapeHtml(curl.forwardAuth)}</pre>
${again}`;
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c);
}

function sendPage(res: ServerResponse, status: number, title: string, body: string): void {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Portier dev: ${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}
pre{white-space:pre-wrap;word-break:break-all;background:#f4f4f4;padding:.5rem}.error{color:#a40000}
.warn{background:#fff3cd;border:1px solid #e0c36c;padding:.5rem 1rem}</style></head>
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
