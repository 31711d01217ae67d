/**
 * The issuer's HTTP surface as one table: method, path, body parsing, handler. Everything else is 404;
 * unexpected failures are a JSON server_error that reveals nothing.
 */
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from "express";
import { PATHS, type IssuerContext } from "./context.js";
import { authorizeEndpoint, loginEndpoint } from "./endpoints/authorize.js";
import { discoveryEndpoint, jwksEndpoint } from "./endpoints/discovery.js";
import { tokenEndpoint } from "./endpoints/token.js";
import { userinfoEndpoint } from "./endpoints/userinfo.js";

interface Route {
  method: "get" | "post";
  path: string;
  /** Parse an application/x-www-form-urlencoded body. */
  form: boolean;
  /** Cross-origin readable (no credentials), for browser-based relying parties. */
  cors: boolean;
  handler: (ctx: IssuerContext) => RequestHandler;
}

const ROUTES: readonly Route[] = [
  { method: "get", path: PATHS.discovery, form: false, cors: true, handler: discoveryEndpoint },
  { method: "get", path: PATHS.jwks, form: false, cors: true, handler: jwksEndpoint },
  { method: "get", path: PATHS.authorize, form: false, cors: false, handler: authorizeEndpoint },
  { method: "post", path: PATHS.login, form: true, cors: false, handler: loginEndpoint },
  { method: "post", path: PATHS.token, form: true, cors: true, handler: tokenEndpoint },
  { method: "get", path: PATHS.userinfo, form: false, cors: true, handler: userinfoEndpoint },
  { method: "post", path: PATHS.userinfo, form: true, cors: true, handler: userinfoEndpoint },
];

export function buildApp(ctx: IssuerContext): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("query parser", "simple");
  const form = express.urlencoded({ extended: false, limit: "16kb", parameterLimit: 50 });
  const cors: RequestHandler = (req, res, next) => {
    res.set({
      "Access-Control-Allow-Origin": "*",
      "Access-Control-Allow-Headers": "Authorization, Content-Type",
      "Access-Control-Allow-Methods": "GET, POST",
    });
    if (req.method === "OPTIONS") return void res.status(204).end();
    next();
  };

  for (const route of ROUTES) {
    const chain: RequestHandler[] = [];
    if (route.cors) {
      chain.push(cors);
      app.options(route.path, cors);
    }
    if (route.form) chain.push(form);
    app[route.method](route.path, ...chain, route.handler(ctx));
  }

  app.use((_req, res) => {
    res.status(404).json({ error: "not_found", error_description: "no such endpoint on this issuer" });
  });
  const onError: ErrorRequestHandler = (err: unknown, _req, res, _next) => {
    const status = typeof (err as { status?: unknown }).status === "number" ? (err as { status: number }).status : 500;
    if (status >= 400 && status < 500) {
      res
        .status(400)
        .set({ "Cache-Control": "no-store" })
        .json({ error: "invalid_request", error_description: "the request could not be parsed" });
      return;
    }
    ctx.logger.error(
      { err: err instanceof Error ? { name: err.name, message: err.message } : String(err) },
      "issuer failure",
    );
    res
      .status(500)
      .set({ "Cache-Control": "no-store" })
      .json({ error: "server_error", error_description: "internal error" });
  };
  app.use(onError);
  return app;
}
