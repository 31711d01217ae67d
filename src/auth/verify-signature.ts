/**
 * Checks a compact JWS signature with keys chosen by the key store (never keys from the token).
 * Any jose failure becomes signature_invalid; jose's own header checks run again as a second guard.
 */
import { compactVerify } from "jose";
import { TokenError } from "./token-error.js";
import type { KeyStore } from "./key-store.js";

export async function verifySignature(token: string, store: KeyStore, kid: string | undefined, alg: string): Promise<string | undefined> {
  const keys = await store.resolve(kid, alg);
  for (const { kid: keyKid, key } of keys) {
    try {
      await compactVerify(token, key, { algorithms: [alg] });
      return keyKid;
    } catch {
      // try the next candidate (only when the token has no kid)
    }
  }
  throw new TokenError("signature_invalid", "the signature does not verify with the issuer's key");
}
