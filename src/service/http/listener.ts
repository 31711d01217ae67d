/**
 * The decision endpoints on plain node:http, before Express (Express costs ~5x a bare server on this path): the
 * table of which request goes to which adapter, and the fail-closed answer when one fails. Everything else goes
 * to `next`, the Express app (app.ts).
 *
 *   | request                                    | adapter            |
 *   |--------------------------------------------|--------------------|
 *   | /forward-auth/{nginx,caddy,traefik}[?...]  | forward-auth.ts    |
 *   | /envoy, /envoy/<checked path>              | envoy-http.ts      |
 *   | POST /decide[?...]                         | decide-endpoint.ts |
 *   | POST /access/v1/... (AuthZEN, when on)     | `authzen` (src/service/authzen/router.ts) |
 *   | anything else                              | next (app.ts)      |
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { Decide } from "../decide/decide.js";
import { answerDecide } from "./decide-endpoint.js";
import { answerEnvoy, ENVOY_PREFIX } from "./envoy-http.js";
import { answerForwardAuth } from "./forward-auth.js";
import type { BodyLimits } from "./read-body.js";
import { sendJson } from "./write-answer.js";

export function decisionListener(
  decide: Decide,
  limits: BodyLimits,
  next: (req: IncomingMessage, res: ServerResponse) => void,
  logger?: Logger,
  authzen?: (req: IncomingMessage, res: ServerResponse, endpoint: string) => Promise<void> | undefined,
) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const url = req.url ?? "/";
    let work: Promise<void>;
    // Fail closed, never crash: an unexpected error answers a deny.
    const failed = (): void => {
      if (!res.headersSent)
        sendJson(res, url.startsWith("/decide") ? 500 : 403, {
          allow: false,
          error: "internal_error",
          reason: "internal_error",
        });
      else res.destroy();
    };
    // Caddy keeps the original query string on the auth request: the endpoint is the path before "?".
    const endpoint = url.split("?", 1)[0]!;
    try {
      if (endpoint === "/forward-auth" || endpoint.startsWith("/forward-auth/"))
        work = answerForwardAuth(req, res, endpoint, decide, logger);
      else if (url.startsWith(`${ENVOY_PREFIX}/`) || url === ENVOY_PREFIX) work = answerEnvoy(req, res, url, decide);
      else if (req.method === "POST" && (url === "/decide" || url.startsWith("/decide?")))
        work = answerDecide(req, res, decide, limits);
      else {
        // An AuthZEN POST answers its own failures (never a /decide-shaped deny): its promise never rejects.
        const answered = req.method === "POST" ? authzen?.(req, res, endpoint) : undefined;
        if (answered === undefined) return next(req, res);
        work = answered;
      }
    } catch {
      return failed();
    }
    work.catch(failed);
  };
}
