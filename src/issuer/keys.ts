/**
 * Signing keys of the issuer: RS256 key pairs generated with jose, published as a JWKS, rotated on demand
 * with the previous key kept published so tokens it signed still verify.
 */
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type CryptoKey, type JWK } from "jose";

export const SIGNING_ALG = "RS256";

interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export interface KeyRing {
  /** The key new tokens are signed with. */
  current(): { kid: string; privateKey: CryptoKey };
  /** Public keys to publish: the current key first, then the previous one (if any). */
  jwks(): { keys: JWK[] };
  /** Makes a new signing key; the former current key stays published, older ones are retired. */
  rotate(): Promise<{ kid: string }>;
}

export async function createKeyRing(): Promise<KeyRing> {
  let keys: SigningKey[] = [await newSigningKey()];
  return {
    current() {
      const key = keys[0]!;
      return { kid: key.kid, privateKey: key.privateKey };
    },
    jwks() {
      return { keys: keys.map((k) => ({ ...k.publicJwk })) };
    },
    async rotate() {
      const fresh = await newSigningKey();
      keys = [fresh, ...keys.slice(0, 1)];
      return { kid: fresh.kid };
    },
  };
}

async function newSigningKey(): Promise<SigningKey> {
  const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, { modulusLength: 2048 });
  const jwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(jwk, "sha256");
  return { kid, privateKey, publicJwk: { ...jwk, kid, use: "sig", alg: SIGNING_ALG } };
}
