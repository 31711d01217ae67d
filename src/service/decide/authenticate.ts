/**
 * Stage 1, authenticate: the request's bearer credential, verified by src/auth (which answers a token it has
 * verified before from its cache). A refusal is a 401 with the TokenError's code and its RFC 6750 header;
 * anything else thrown is not a refusal but a failure (the caller denies internal_error).
 */
import { TokenError, wwwAuthenticate } from "../../auth/index.js";
import { engineDeny } from "../../engine/index.js";
import type { Decision, RoleCheckMode } from "../../engine/types.js";
import type { DecisionRequest } from "./types.js";

export type Authenticated = { ok: true; claims: Record<string, unknown> } | { ok: false; deny: Decision; www: string };

/** What the pipeline needs of src/auth's AccessTokenVerifier: a token's verified claims, or a TokenError. */
export interface TokenVerifier {
  verify(token: string): Promise<{ claims: Record<string, unknown> }>;
}

export async function authenticate(
  req: DecisionRequest,
  verifier: TokenVerifier,
  mode: RoleCheckMode,
): Promise<Authenticated> {
  try {
    if (req.authorizationInvalid)
      throw new TokenError("token_malformed", "the Authorization header is not a single Bearer credential");
    if (!req.token) throw new TokenError("token_missing", "no access token was presented");
    return { ok: true, claims: (await verifier.verify(req.token)).claims };
  } catch (err) {
    if (!(err instanceof TokenError)) throw err;
    return { ok: false, deny: engineDeny(err.code, err.message, mode, 401), www: wwwAuthenticate(err) };
  }
}
