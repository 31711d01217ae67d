/**
 * Stage 1, authenticate: the request's bearer credential, verified by src/auth. A token the verifier has
 * already verified (and whose key is still there) answers at once, without a promise; any other goes
 * through `verify`. A refusal is a 401 with the TokenError's code and its RFC 6750 header; anything else
 * thrown is not a refusal but a failure (the caller denies internal_error).
 */
import { TokenError, wwwAuthenticate, type AccessTokenVerifier } from "../../auth/index.js";
import { engineDeny } from "../../engine/index.js";
import type { Decision, RoleCheckMode } from "../../engine/types.js";
import type { DecisionRequest, MaybePromise } from "./types.js";

export type Authenticated =
  { ok: true; claims: Record<string, unknown> | undefined } | { ok: false; deny: Decision; www: string };

function refused(err: unknown, mode: RoleCheckMode): Authenticated {
  if (!(err instanceof TokenError)) throw err;
  return { ok: false, deny: engineDeny(err.code, err.message, mode, 401), www: wwwAuthenticate(err) };
}

export function authenticate(
  req: DecisionRequest,
  verifier: AccessTokenVerifier,
  mode: RoleCheckMode,
): MaybePromise<Authenticated> {
  try {
    if (req.authorizationInvalid)
      throw new TokenError("token_malformed", "the Authorization header is not a single Bearer credential");
    if (!req.token) throw new TokenError("token_missing", "no access token was presented");
    const cached = verifier.verifyCached?.(req.token);
    if (cached) return { ok: true, claims: cached.claims };
    return verifier.verify(req.token).then(
      (verified) => ({ ok: true, claims: verified.claims }),
      (err: unknown) => refused(err, mode),
    );
  } catch (err) {
    return refused(err, mode);
  }
}
