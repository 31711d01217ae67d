/**
 * Turns a refusal by jose's jwtVerify into Portier's TokenError: jose's error code (and for a claim,
 * which claim and why) picks the TokenError code; the text names the values involved, never the token.
 */
import { errors } from "jose";
import { TokenError } from "./token-error.js";
import { explainMalformed, peekHeader } from "./screen-jws.js";

export interface RefusalWording {
  /** "token" or "ID token". */
  noun: string;
  /** The issuer the token must name, and how the message calls it ("configured", "expected"). */
  issuer: string;
  issuerRole: string;
}

function claimRefusal(err: errors.JWTClaimValidationFailed, w: RefusalWording): TokenError {
  const { claim, reason, payload } = err;
  if (claim === "iss") {
    const iss = payload.iss;
    return typeof iss === "string"
      ? new TokenError(
          "issuer_mismatch",
          `the ${w.noun} was issued by ${iss.slice(0, 200)}, not by the ${w.issuerRole} issuer ${w.issuer}`,
        )
      : new TokenError("issuer_mismatch", `the ${w.noun} has no iss`);
  }
  if (reason === "missing") return new TokenError("claims_invalid", `claim ${claim} is missing`);
  if (reason === "invalid") return new TokenError("claims_invalid", `claim ${claim} is not a number`);
  if (claim === "nbf") return new TokenError("token_not_yet_valid", `the ${w.noun} is not valid yet (nbf)`);
  return new TokenError("claims_invalid", `claim ${claim} failed its check`);
}

/**
 * keyGiven: the key resolver had already handed jose a key, so what went wrong after it (a key that does
 * not fit, a signature that cannot be decoded) is a signature that does not verify.
 */
export function fromJoseError(err: unknown, token: string, w: RefusalWording, keyGiven: boolean): TokenError {
  if (err instanceof TokenError) return err;
  const code = err instanceof errors.JOSEError ? err.code : undefined;
  switch (code) {
    case "ERR_JWT_EXPIRED":
      return new TokenError("token_expired", `the ${w.noun} has expired`);
    case "ERR_JWT_CLAIM_VALIDATION_FAILED":
      return claimRefusal(err as errors.JWTClaimValidationFailed, w);
    case "ERR_JWS_SIGNATURE_VERIFICATION_FAILED":
      return new TokenError("signature_invalid", "the signature does not verify with the issuer's key");
    case "ERR_JOSE_ALG_NOT_ALLOWED": {
      const header = peekHeader(token)?.alg;
      const alg = typeof header === "string" ? header : "";
      return new TokenError("alg_not_allowed", `algorithm ${JSON.stringify(alg.slice(0, 20))} is not allowed`);
    }
  }
  // ERR_JWS_INVALID, ERR_JWT_INVALID, ERR_JOSE_NOT_SUPPORTED (crit) and key-shape TypeErrors: find which part is wrong.
  const explained = explainMalformed(token);
  if (explained) return explained;
  if (keyGiven) return new TokenError("signature_invalid", "the signature does not verify with the issuer's key");
  // Defence in depth: nothing but TokenError leaves verification for bad input.
  return new TokenError("token_malformed", `the ${w.noun} could not be processed`);
}
