/**
 * Client authentication at the token endpoint (RFC 6749 2.3.1): client_secret_basic, client_secret_post,
 * or none for public clients; one method per request. Failures are invalid_client with 401, and
 * WWW-Authenticate when the client tried the Authorization header.
 */
import type { Request } from "express";
import { constantTimeEqual } from "./constant-time.js";
import { OAuthError } from "./oauth-error.js";
import type { Params } from "./params.js";
import type { IssuerClient } from "./sample-data.js";

export type ClientAuthMethod = "client_secret_basic" | "client_secret_post" | "none";

export interface AuthenticatedClient {
  client: IssuerClient;
  method: ClientAuthMethod;
}

export function authenticateClient(
  req: Request,
  params: Params,
  clients: ReadonlyMap<string, IssuerClient>,
): AuthenticatedClient {
  const basic = parseBasic(req.headers.authorization);
  const failure = (description: string) =>
    new OAuthError(
      "invalid_client",
      description,
      401,
      basic ? { "WWW-Authenticate": 'Basic realm="portier-issuer", charset="UTF-8"' } : {},
    );

  if (basic && params["client_secret"] !== undefined) {
    throw new OAuthError(
      "invalid_request",
      "use one client authentication method, not both Authorization header and client_secret",
    );
  }
  if (basic && params["client_id"] !== undefined && params["client_id"] !== basic.id) {
    throw new OAuthError("invalid_request", "client_id differs from the Authorization header");
  }
  const clientId = basic?.id ?? params["client_id"];
  if (!clientId) throw failure("client authentication is required");
  const client = clients.get(clientId);
  if (!client) throw failure("unknown client or wrong credentials");

  const presented = basic?.secret ?? params["client_secret"];
  if (client.type === "public") {
    if (presented !== undefined) throw failure("public client must not send a client secret");
    return { client, method: "none" };
  }
  if (presented === undefined || !constantTimeEqual(presented, client.client_secret ?? "")) {
    throw failure("unknown client or wrong credentials");
  }
  return { client, method: basic ? "client_secret_basic" : "client_secret_post" };
}

/** RFC 6749 2.3.1: id and secret are form-urlencoded before being joined for Basic. */
function parseBasic(header: string | undefined): { id: string; secret: string } | undefined {
  if (!header) return undefined;
  const match = /^Basic ([A-Za-z0-9+/=]+)$/i.exec(header.trim());
  if (!match?.[1])
    throw new OAuthError("invalid_client", "malformed Basic Authorization header", 401, {
      "WWW-Authenticate": 'Basic realm="portier-issuer"',
    });
  const decoded = Buffer.from(match[1], "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0)
    throw new OAuthError("invalid_client", "malformed Basic credentials", 401, {
      "WWW-Authenticate": 'Basic realm="portier-issuer"',
    });
  try {
    return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
  } catch {
    throw new OAuthError("invalid_client", "malformed Basic credentials", 401, {
      "WWW-Authenticate": 'Basic realm="portier-issuer"',
    });
  }
}

function formDecode(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, " "));
}
