/**
 * Test support: the one token signer of the tests. Keys made here; tokens signed byte for byte (so headers
 * and payloads can be malformed on purpose) or from objects with `typ: at+jwt` by default.
 */
import { webcrypto } from "node:crypto";
import { generateKeyPair, exportJWK, type CryptoKey, type JWK } from "jose";

export interface TestKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export async function makeKey(kid = "k1", alg = "RS256"): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: "sig" };
  return { kid, alg, privateKey, publicJwk };
}

const b64 = (s: string | Uint8Array) => Buffer.from(s).toString("base64url");

function subtleParams(alg: string): webcrypto.AlgorithmIdentifier | webcrypto.RsaPssParams | webcrypto.EcdsaParams {
  const bits = alg.slice(2);
  if (alg.startsWith("RS")) return { name: "RSASSA-PKCS1-v1_5" };
  if (alg.startsWith("PS")) return { name: "RSA-PSS", saltLength: Number(bits) / 8 };
  return { name: "ECDSA", hash: `SHA-${bits}` };
}

/** Signs header and payload given as objects or raw JSON text. */
export async function signRaw(
  header: object | string,
  payload: object | string,
  key: TestKey,
  alg = key.alg,
): Promise<string> {
  const h = b64(typeof header === "string" ? header : JSON.stringify(header));
  const p = b64(typeof payload === "string" ? payload : JSON.stringify(payload));
  const input = `${h}.${p}`;
  const sig = await webcrypto.subtle.sign(subtleParams(alg), key.privateKey, Buffer.from(input));
  return `${input}.${b64(new Uint8Array(sig))}`;
}

/** An access token (`typ: at+jwt`, the key's alg and kid) unless extraHeader says otherwise. */
export function sign(payload: object, key: TestKey, extraHeader: Record<string, unknown> = {}): Promise<string> {
  return signRaw({ alg: key.alg, kid: key.kid, typ: "at+jwt", ...extraHeader }, payload, key);
}
