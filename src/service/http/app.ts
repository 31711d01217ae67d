/**
 * The Express app for everything but the hot decision endpoints: /health, /ready, /metrics, 405/404,
 * and an error handler that never crashes or allows. See listener.ts for /decide, forward-auth, Envoy.
 */
import { readFileSync } from "node:fs";
import express, { type Request, type Response, type NextFunction } from "express";
import type { AccessTokenVerifier } from "../../auth/index.js";
import type { Directory } from "../../directory/index.js";
import type { PolicyHolder } from "../policy.js";
import type { ServiceMetrics } from "../metrics.js";
import { METRICS_CONTENT_TYPE, serviceMetrics } from "../cluster-metrics.js";
import type { Shadow } from "../shadow/shadow.js";
import { shadowProblem } from "../shadow/start-shadow.js";
import { SCIM_PREFIX } from "../scim/routes.js";
import type { RunningScim } from "../scim/start-scim.js";

/** What the operator endpoints read: the state of the keys, policy and directory, and the metrics. */
export interface AppDeps {
  verifier: AccessTokenVerifier;
  policy: PolicyHolder;
  directory: Directory | undefined;
  metrics: ServiceMetrics;
  /** With --shadow-bundle or --shadow-bundle-url: a problem on /ready when broken, never unready. */
  shadow?: Pick<Shadow, "status"> | undefined;
  /** True from SIGTERM/SIGINT on: /ready answers 503 so that load balancers stop sending here. */
  stopping?: () => boolean;
  /** The decision log: a collector failing for too long is a problem (still ready). */
  decisionLogs?: { problem(): string | undefined };
  /** With --authzen-pep-key-file or --authzen-pep-clients: the AuthZEN endpoints (src/service/authzen). */
  authzen?: express.Router | undefined;
  /** With --scim-token-file: the SCIM endpoints (decision port) and their problems and status. */
  scim?: Pick<RunningScim, "router" | "problem" | "status"> | undefined;
}

/** What /ready answers (ready: 200, else 503); gRPC health (grpc/health.ts) reports the same. */
export function readiness(
  deps: Pick<AppDeps, "verifier" | "policy" | "directory" | "shadow" | "stopping" | "decisionLogs" | "scim">,
): {
  ready: boolean;
  missing: string[];
  problems: string[];
} {
  const missing: string[] = [];
  const problems: string[] = [];
  if (deps.stopping?.())
    missing.push(
      "stopping: the service is shutting down (still answering until the port closes); send new requests elsewhere",
    );
  const p = deps.policy.status();
  if (!p.loaded) missing.push(`policy: ${p.lastError ?? "not loaded yet"}`);
  else if (p.lastError)
    problems.push(`policy: last reload refused, revision ${p.revision} keeps serving: ${p.lastError}`);
  const k = deps.verifier.status();
  if (!k.ready) missing.push(`keys: ${k.lastError ?? "not fetched yet"} (${k.source})`);
  else if (k.lastError) problems.push(`keys: last refresh failed, cached keys in use: ${k.lastError}`);
  if (deps.directory) {
    const d = deps.directory.status();
    if (!d.loaded) missing.push("directory: not loaded");
    else if (d.lastError) problems.push(`directory: last reload refused, previous index keeps serving: ${d.lastError}`);
    if (d.rolesProblem) problems.push(`directory: ${d.rolesProblem}`);
  }
  const shadow = deps.shadow && shadowProblem(deps.shadow.status());
  if (shadow) problems.push(shadow);
  const logProblem = deps.decisionLogs?.problem();
  if (logProblem) problems.push(logProblem);
  const scimProblem = deps.scim?.problem();
  if (scimProblem) problems.push(scimProblem);
  return { ready: missing.length === 0, missing, problems };
}

/** The OpenAPI 3.1 description of this service (docs/openapi.json; a test checks real answers against it). */
const OPENAPI_FILE = new URL("../../../docs/openapi.json", import.meta.url);

/**
 * `endpoints`: "all" (one port), or with --admin-port "decisions" (the decision port: no /health, /ready,
 * /metrics) and "admin" (the admin port: those three and /openapi.json only).
 */
export function createApp(deps: AppDeps, endpoints: "all" | "decisions" | "admin" = "all"): express.Express {
  const openapi = readFileSync(OPENAPI_FILE, "utf8");
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);

  if (endpoints !== "decisions") mountOperatorEndpoints(app, deps);

  app.get("/openapi.json", (_req, res) => {
    res.type("application/json").send(openapi);
  });

  if (endpoints !== "admin" && deps.authzen) app.use(deps.authzen);
  if (endpoints !== "admin" && deps.scim) app.use(SCIM_PREFIX, deps.scim.router);

  if (endpoints !== "admin") {
    // POST /decide, /forward-auth/<gateway> and /envoy are answered before Express (listener.ts).
    app.all("/decide", (_req, res) => {
      res.setHeader("Allow", "POST");
      res.status(405).json({ error: "method_not_allowed", message: "use POST /decide" });
    });
  }

  const listed = {
    all:
      "POST /decide, /forward-auth/{nginx,caddy,traefik}, /envoy/<path>, GET /health, /ready, /metrics, " +
      "/openapi.json",
    decisions:
      "POST /decide, /forward-auth/{nginx,caddy,traefik}, /envoy/<path>, GET /openapi.json (health, readiness " +
      "and metrics are on the admin port)",
    admin: "GET /health, /ready, /metrics, /openapi.json",
  }[endpoints];
  app.use((_req, res) => {
    res.status(404).json({ error: "not_found", message: `endpoints: ${listed}` });
  });

  // Errors never take the process down and never allow.
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const e = err as { type?: string; status?: number; message?: string };
    if (res.headersSent) return;
    res
      .status(typeof e.status === "number" && e.status >= 400 && e.status < 500 ? e.status : 500)
      .json({ error: "internal_error", message: "the request could not be handled" });
  });
  return app;
}

/** /health, /ready and /metrics (the whole cluster's with --workers N). */
function mountOperatorEndpoints(app: express.Express, deps: AppDeps): void {
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
      shadow: deps.shadow?.status() ?? null,
      ...(deps.scim ? { scim: deps.scim.status() } : {}),
    });
  });

  app.get("/metrics", (_req, res) => {
    serviceMetrics(deps.metrics.registry).then(
      (text) => res.type(METRICS_CONTENT_TYPE).send(text),
      (err: Error) => res.status(503).type("text/plain").send(`metrics unavailable: ${err.message}\n`),
    );
  });
}
