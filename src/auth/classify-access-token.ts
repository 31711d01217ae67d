/**
 * Access-token rules that go beyond signature and time: typ, "this is really an ID token", and the
 * audience of client-credentials tokens (spec 2.3: aud must contain apiclients, not merely mention it).
 */
import { TokenError } from "./token-error.js";
import type { NormalisedClaims } from "./types.js";

export const API_AUDIENCE = "apiclients";
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

export function checkAccessTokenShape(c: NormalisedClaims): void {
  if (c.nonce !== undefined || c.at_hash !== undefined || c.s_hash !== undefined) {
    throw new TokenError("id_token_not_accepted", "an ID token (nonce/at_hash/s_hash) is not an access token");
  }
  if (c.scope.length === 0 && c.aud.length > 0 && !c.aud.includes(API_AUDIENCE)) {
    throw new TokenError(
      "id_token_not_accepted",
      "a token without scope addressed to a client is an ID token, not an access token",
    );
  }
  if (c.sub === undefined && !c.aud.includes(API_AUDIENCE)) {
    throw new TokenError("audience_mismatch", `a client-credentials token must have aud ${API_AUDIENCE}`);
  }
}
