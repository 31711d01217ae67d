/**
 * Access-token rules that go beyond signature and time: typ, "this is really an ID token", and the
 * audience of client-credentials tokens (spec 2.3: aud must contain apiclients, not merely mention it). Which
 * claim names the subject and which audience an application token carries are the project's (AccessTokenShape,
 * the spec's by default); a project requiring no audience leaves the scope-less heuristic out (nonce, at_hash and
 * s_hash still mark an ID token, and --require-at-jwt-typ refuses every token not typed at+jwt).
 */
import { TokenError } from "./token-error.js";
import type { AccessTokenShape, NormalisedClaims } from "./types.js";

export const API_AUDIENCE = "apiclients";

/** The spec's: the subject is sub, an application token carries the audience apiclients. */
export const SPEC_ACCESS_TOKEN_SHAPE: AccessTokenShape = Object.freeze({
  subjectClaim: "sub",
  applicationAudience: API_AUDIENCE,
});
const AT_JWT = new Set(["at+jwt", "application/at+jwt"]);

export function checkTyp(header: Record<string, unknown>, required: boolean): void {
  const typ = header.typ;
  if (typ !== undefined && typeof typ !== "string")
    throw new TokenError("typ_invalid", "the header typ is not a string");
  const t = typ?.toLowerCase();
  if (t !== undefined && AT_JWT.has(t)) return;
  if (required) {
    if (t === undefined || t === "jwt" || t === "application/jwt")
      throw new TokenError("id_token_not_accepted", "a token typed JWT is not an access token (at+jwt is required)");
    throw new TokenError("typ_invalid", "the header typ is not at+jwt");
  }
  if (t !== undefined && t !== "jwt" && t !== "application/jwt")
    throw new TokenError("typ_invalid", "the header typ is not at+jwt or JWT");
}

export function checkAccessTokenShape(c: NormalisedClaims, shape: AccessTokenShape = SPEC_ACCESS_TOKEN_SHAPE): void {
  if (c.nonce !== undefined || c.at_hash !== undefined || c.s_hash !== undefined) {
    throw new TokenError("id_token_not_accepted", "an ID token (nonce/at_hash/s_hash) is not an access token");
  }
  const audience = shape.applicationAudience;
  if (audience === null) return;
  if (c.scope.length === 0 && c.aud.length > 0 && !c.aud.includes(audience)) {
    throw new TokenError(
      "id_token_not_accepted",
      "a token without scope addressed to a client is an ID token, not an access token",
    );
  }
  const subject = Object.hasOwn(c, shape.subjectClaim) ? c[shape.subjectClaim] : undefined;
  if (subject === undefined && !c.aud.includes(audience)) {
    throw new TokenError("audience_mismatch", `a client-credentials token must have aud ${audience}`);
  }
}
