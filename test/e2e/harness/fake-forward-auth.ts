/**
 * A stand-in forward-auth server used only by the harness self-test (harness.test.ts), so the gateway
 * configs can be checked without the decision service. It follows the /forward-auth contract of issue 5
 * for fixed bearer values: "allow" -> 200 with X-Portier-* headers, "allow-bare" -> 200 without them,
 * none -> 401 with WWW-Authenticate, "deny" -> 403, "boom" -> 500 (which Portier must never answer).
 */
import { createServer } from "node:http";
import { listenOnLoopback } from "./net.js";

export interface FakeAuthSeen {
  method: string;
  path: string;
  originalMethod: string | undefined;
  originalUri: string | undefined;
  authorization: string | undefined;
}

export interface FakeForwardAuth {
  port: number;
  seen: FakeAuthSeen[];
  close(): Promise<void>;
}

/** Every X-Portier-* header, as Portier sends them all on a 200 (the shipped Caddyfile copies each one). */
export const FAKE_HEADERS = {
  "x-portier-subject": "fake-subject",
  "x-portier-tenant": "fake-tenant",
  "x-portier-roles": "enseignant_jeune",
  "x-portier-decision-id": "fake-decision",
  "x-portier-client-id": "fake-client",
  "x-portier-flow": "accessCode",
  "x-portier-reason": "allowed",
};

function one(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

export async function startFakeForwardAuth(): Promise<FakeForwardAuth> {
  const seen: FakeAuthSeen[] = [];
  const server = createServer((req, res) => {
    const entry: FakeAuthSeen = {
      method: req.method ?? "",
      path: req.url ?? "",
      // nginx auth_request headers, then Caddy/Traefik forward auth headers.
      originalMethod: one(req.headers["x-original-method"]) ?? one(req.headers["x-forwarded-method"]),
      originalUri: one(req.headers["x-original-uri"]) ?? one(req.headers["x-forwarded-uri"]),
      authorization: one(req.headers.authorization),
    };
    seen.push(entry);
    req.resume();
    const token = /^Bearer (.+)$/.exec(entry.authorization ?? "")?.[1];
    if (token === "allow") {
      res.writeHead(200, FAKE_HEADERS).end();
    } else if (token === "allow-bare") {
      res.writeHead(200).end();
    } else if (token === "deny") {
      res.writeHead(403, { "content-type": "application/json" }).end('{"reason":"role_not_allowed"}');
    } else if (token === "boom") {
      res.writeHead(500).end();
    } else {
      res.writeHead(401, { "www-authenticate": 'Bearer realm="portier", error="invalid_token"' }).end();
    }
  });
  const { port, close } = await listenOnLoopback(server);
  return { port, seen, close };
}
