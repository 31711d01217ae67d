/**
 * Turns verified claims into NormalisedClaims: scope/amr/aud as string arrays whatever shape they came
 * in, and the registered time claims checked for type. Unknown extra claims are kept as they are.
 */
import { TokenError } from "./token-error.js";
import type { NormalisedClaims } from "./types.js";

export function toStringList(value: unknown, name: string, splitSpaces: boolean): string[] {
  if (value === undefined) return [];
  if (typeof value === "string") return splitSpaces ? value.split(" ").filter((s) => s.length > 0) : [value];
  if (Array.isArray(value) && value.every((v): v is string => typeof v === "string")) return [...value];
  throw new TokenError("claims_invalid", `claim ${name} is neither a string nor a list of strings`);
}

const NUMERIC = ["exp", "nbf", "iat", "auth_time"] as const;
const STRINGS = ["sub", "client_id", "tenant_id", "idp", "nonce", "at_hash", "s_hash", "sid", "jti", "azp"] as const;

export function normaliseClaims(payload: Record<string, unknown>): NormalisedClaims {
  for (const n of NUMERIC) {
    const v = payload[n];
    if (v !== undefined && (typeof v !== "number" || !Number.isFinite(v)))
      throw new TokenError("claims_invalid", `claim ${n} is not a number`);
  }
  for (const n of STRINGS) {
    const v = payload[n];
    if (v !== undefined && typeof v !== "string") throw new TokenError("claims_invalid", `claim ${n} is not a string`);
  }
  if (typeof payload.exp !== "number") throw new TokenError("claims_invalid", "claim exp is missing");
  if (typeof payload.iss !== "string") throw new TokenError("issuer_mismatch", "claim iss is missing");
  return {
    ...payload,
    iss: payload.iss,
    exp: payload.exp,
    aud: toStringList(payload.aud, "aud", false),
    scope: toStringList(payload.scope, "scope", true),
    amr: toStringList(payload.amr, "amr", true),
  };
}

/** iat in the future (jose checks exp and nbf, and iat only against a maximum age). */
export function checkIssuedAt(c: NormalisedClaims, now: number, tolerance: number, noun: string): void {
  if (c.iat !== undefined && c.iat > now + tolerance)
    throw new TokenError("token_not_yet_valid", `the ${noun} was issued in the future (iat)`);
}
