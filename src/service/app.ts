/**
 * The Express app: POST /decide, /forward-auth (nginx, Traefik, Caddy), Envoy ext_authz under /envoy,
 * /health, /ready, /metrics. Each adapter only maps its request to a DecisionRequest and the answer back.
 */
import express, { type Request, type Response, type NextFunction } from "express";
import type { AccessTokenVerifier } from "../auth/index.js";
import type { Directory } from "../directory/index.js";
import { bearerToken, type Decide, type DecisionAnswer, type DecisionRequest } from "./decide.js";
import { parseDecideBody, type DecideBody } from "./decide-body.js";
import type { PolicyHolder } from "./policy.js";
import type { ServiceMetrics } from "./metrics.js";

export interface AppDeps {
  decide: Decide;
  verifier: AccessTokenVerifier;
  policy: PolicyHolder;
  directory: Directory | undefined;
  metrics: ServiceMetrics;
  maxBodyBytes: number;
}

function fromBody(body: DecideBody): DecisionRequest {
  let auth: string | undefined;
  for (const [name, value] of Object.entries(body.headers ?? {})) if (name.toLowerCase() === "authorization") auth = value;
  if (body.token !== undefined) return { method: body.method, path: body.path, token: body.token || undefined };
  const b = bearerToken(auth);
  return { method: body.method, path: body.path, token: b.token, ...(b.invalid ? { authorizationInvalid: true } : {}) };
}

function publicAnswer(a: DecisionAnswer): Omit<DecisionAnswer, "www_authenticate"> {
  const { www_authenticate: _omit, ...rest } = a;
  return rest;
}

function header(req: Request, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Copy only safe characters into response headers. */
function headerValue(s: string): string {
  return s.replace(/[^\x20-\x7e]/g, "?");
}

function gatewayRequest(req: Request, method: string | undefined, uri: string | undefined): DecisionRequest | undefined {
  if (!method || !uri) return undefined;
  const b = bearerToken(req.headers.authorization);
  return { method, path: uri, token: b.token, ...(b.invalid ? { authorizationInvalid: true } : {}) };
}

function sendGateway(res: Response, a: DecisionAnswer): void {
  res.setHeader("X-Portier-Decision-Id", a.decision_id);
  res.setHeader("Cache-Control", "no-store");
  if (a.allow) {
    const s = a.subject;
    res.setHeader("X-Portier-Subject", headerValue(s?.sub ?? s?.client_id ?? ""));
    res.setHeader("X-Portier-Tenant", headerValue(s?.tenant_id ?? ""));
    res.setHeader("X-Portier-Roles", headerValue((s?.roles ?? []).join(",")));
    if (s?.client_id) res.setHeader("X-Portier-Client-Id", headerValue(s.client_id));
    if (a.flow) res.setHeader("X-Portier-Flow", a.flow);
    res.status(200).json({ allow: true, decision_id: a.decision_id });
    return;
  }
  res.setHeader("X-Portier-Reason", a.reason);
  if (a.status === 401) res.setHeader("WWW-Authenticate", a.www_authenticate ?? 'Bearer error="invalid_token"');
  res.status(a.status === 401 ? 401 : 403).json({ allow: false, status: a.status, reason: a.reason, message: a.message, decision_id: a.decision_id });
}

function sendGatewayBad(res: Response, message: string): void {
  res.setHeader("X-Portier-Reason", "request_invalid");
  res.status(403).json({ allow: false, status: 403, reason: "request_invalid", message });
}

export function readiness(deps: Pick<AppDeps, "verifier" | "policy" | "directory">): { ready: boolean; missing: string[]; problems: string[] } {
  const missing: string[] = [];
  const problems: string[] = [];
  const p = deps.policy.status();
  if (!p.loaded) missing.push(`policy: ${p.lastError ?? "not loaded yet"}`);
  else if (p.lastError) problems.push(`policy: last reload refused, revision ${p.revision} keeps serving: ${p.lastError}`);
  const k = deps.verifier.status();
  if (!k.ready) missing.push(`keys: ${k.lastError ?? "not fetched yet"} (${k.source})`);
  else if (k.lastError) problems.push(`keys: last refresh failed, cached keys in use: ${k.lastError}`);
  if (deps.directory) {
    const d = deps.directory.status();
    if (!d.loaded) missing.push("directory: not loaded");
    else if (d.lastError) problems.push(`directory: last reload refused, previous index keeps serving: ${d.lastError}`);
  }
  return { ready: missing.length === 0, missing, problems };
}

export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  const { decide } = deps;

  app.get("/health", (_req, res) => {
    res.json({ status: "ok" });
  });

  app.get("/ready", (_req, res) => {
    const r = readiness(deps);
    res.status(r.ready ? 200 : 503).json({
      ...r,
      policy: deps.policy.status(),
      keys: deps.verifier.status(),
      directory: deps.directory?.status() ?? null,
    });
  });

  app.get("/metrics", async (_req, res, next) => {
    try {
      res.setHeader("Content-Type", deps.metrics.registry.contentType);
      res.send(await deps.metrics.registry.metrics());
    } catch (err) {
      next(err);
    }
  });

  app.post("/decide", express.json({ limit: deps.maxBodyBytes, strict: false, type: () => true }), async (req, res) => {
    const parsed = parseDecideBody(req.body);
    if (!parsed.ok) {
      res.status(400).json({ error: "invalid_request", message: parsed.error });
      return;
    }
    if (!parsed.batch) {
      res.json(publicAnswer(await decide(fromBody(parsed.request), "decide")));
      return;
    }
    const answers = await Promise.all(parsed.requests.map((r) => decide(fromBody(r), "decide")));
    res.json(answers.map(publicAnswer));
  });
  app.all("/decide", (_req, res) => {
    res.setHeader("Allow", "POST");
    res.status(405).json({ error: "method_not_allowed", message: "use POST /decide" });
  });

  app.all("/forward-auth", async (req, res) => {
    const method = header(req, "x-original-method") ?? header(req, "x-forwarded-method");
    const uri = header(req, "x-original-uri") ?? header(req, "x-forwarded-uri");
    const r = gatewayRequest(req, method, uri);
    if (!r) return sendGatewayBad(res, "X-Original-Method/X-Original-URI (nginx) or X-Forwarded-Method/X-Forwarded-Uri (Traefik, Caddy) are required");
    sendGateway(res, await decide(r, "forward-auth"));
  });

  // Envoy ext_authz HTTP service: the original request's method, path (after the prefix) and headers.
  app.use("/envoy", async (req, res) => {
    const r = gatewayRequest(req, req.method, req.url);
    if (!r) return sendGatewayBad(res, "no original path");
    sendGateway(res, await decide(r, "envoy"));
  });

  app.use((_req, res) => {
    res.status(404).json({ error: "not_found", message: "endpoints: POST /decide, /forward-auth, /envoy/<path>, GET /health, /ready, /metrics" });
  });

  // Errors never take the process down and never allow.
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const e = err as { type?: string; status?: number; message?: string };
    if (res.headersSent) return;
    if (req.path === "/decide" && e.type === "entity.too.large") {
      res.status(413).json({ error: "payload_too_large", message: `body over ${deps.maxBodyBytes} bytes` });
    } else if (req.path === "/decide" && e.type === "entity.parse.failed") {
      res.status(400).json({ error: "invalid_json", message: `body: ${e.message ?? "malformed JSON"}` });
    } else if (req.path === "/decide" && typeof e.status === "number" && e.status >= 400 && e.status < 500) {
      res.status(e.status).json({ error: "invalid_request", message: e.message ?? "bad request" });
    } else {
      res.status(req.path === "/decide" ? 500 : 403).json({ allow: false, error: "internal_error", reason: "internal_error" });
    }
  });
  return app;
}
