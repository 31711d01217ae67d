/**
 * Who may ask: the AuthZEN endpoints let the caller name any subject, so the caller (the PEP) must authenticate,
 * with `Authorization: Bearer <credential>`:
 *   - a key: the content of --authzen-pep-key-file, compared in constant time, read again when the file changes
 *     (a changed file that is not a valid key is refused and the previous key kept, TokenFile);
 *   - or an access token of one of --authzen-pep-clients, verified as /decide verifies tokens (issuer, keys, expiry).
 * No credential, or one that is neither: 401 with WWW-Authenticate (RFC 6750); a verified token of another client:
 * 403. The credential never reaches a log line or an answer.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { bearerToken, TokenError, type AccessTokenVerifier } from "../../auth/index.js";
import type { TokenFile } from "../decision-logs/token-file.js";

export type PepCheck = { ok: true; pep: string } | { ok: false; status: 401 | 403; error: string; message: string };

export interface PepCredentials {
  keyFile?: Pick<TokenFile, "current"> | undefined;
  clients?: readonly string[] | undefined;
  verifier: Pick<AccessTokenVerifier, "verify">;
}

export const PEP_REALM = "portier-authzen";

const digest = (s: string): Buffer => createHash("sha256").update(s, "utf8").digest();

/** The key's digest, computed again only when the key changes (the file is still read for every request). */
let lastKey: { key: string; digest: Buffer } | undefined;
function keyDigest(key: string): Buffer {
  if (lastKey?.key !== key) lastKey = { key, digest: digest(key) };
  return lastKey.digest;
}

/** The WWW-Authenticate value of a 401. */
export function pepChallenge(check: Extract<PepCheck, { ok: false }>): string {
  return check.error === "invalid_request"
    ? `Bearer realm="${PEP_REALM}"`
    : `Bearer realm="${PEP_REALM}", error="invalid_token", error_description="${check.message.replace(/"/g, "'")}"`;
}

/** Every Authorization header of the request (a repeated one is refused). */
function authorizationValues(req: IncomingMessage): string[] {
  const values: string[] = [];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2)
    if (req.rawHeaders[i]!.toLowerCase() === "authorization") values.push(req.rawHeaders[i + 1]!);
  return values;
}

export async function checkPep(req: IncomingMessage, creds: PepCredentials): Promise<PepCheck> {
  const values = authorizationValues(req);
  if (values.length === 0)
    return { ok: false, status: 401, error: "invalid_request", message: "the AuthZEN endpoints need a credential" };
  const { token } = bearerToken(values.length === 1 ? values[0] : values);
  if (!token)
    return {
      ok: false,
      status: 401,
      error: "invalid_token",
      message: "the Authorization header must be one Bearer credential",
    };
  if (creds.keyFile && timingSafeEqual(digest(token), keyDigest(creds.keyFile.current())))
    return { ok: true, pep: "key" };
  if (creds.clients?.length) {
    let claims: Record<string, unknown>;
    try {
      claims = (await creds.verifier.verify(token)).claims;
    } catch (err) {
      if (!(err instanceof TokenError)) throw err;
      return { ok: false, status: 401, error: "invalid_token", message: `the access token is refused: ${err.code}` };
    }
    const client = typeof claims.client_id === "string" ? claims.client_id : "";
    if (!creds.clients.includes(client))
      return {
        ok: false,
        status: 403,
        error: "insufficient_scope",
        message: `client ${JSON.stringify(client.slice(0, 64))} is not a PEP of this service (--authzen-pep-clients)`,
      };
    return { ok: true, pep: client };
  }
  return { ok: false, status: 401, error: "invalid_token", message: "the credential is not this service's PEP key" };
}
