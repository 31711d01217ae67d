/**
 * OPA's bundle signatures (`/.signatures.json`, as `opa build --signing-key` writes and `opa run
 * --verification-key` checks): one compact JWS whose payload lists every file of the bundle with its
 * SHA-256. JSON files (data.json, .manifest) are hashed over OPA's canonical form (keys sorted, no
 * whitespace, numbers as written), other files over their bytes. Verifying refuses an unsigned bundle, a
 * bad signature, and any file that is missing from the list, not in the bundle, or whose hash differs.
 */
import { createHash, createPrivateKey, createPublicKey, type KeyObject } from "node:crypto";
import { CompactSign, compactVerify, createLocalJWKSet, type JSONWebKeySet } from "jose";
import { messageOf } from "../errors/caught.js";
import { EngineLoadError } from "./errors.js";

export const SIGNATURES_FILE = "/.signatures.json";
export const DEFAULT_SIGNING_ALG = "RS256";
/** OPA's default key id (`opa build --signing-key` and `opa run --verification-key-id`). */
export const DEFAULT_KEY_ID = "default";
export const SIGNING_ALGS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
] as const;

/** Whether `alg` is one of SIGNING_ALGS (a check on a string, not an assertion). */
const isSigningAlg = (alg: string): boolean => SIGNING_ALGS.some((a) => a === alg);

export interface FileHash {
  name: string;
  hash: string;
  algorithm: string;
}

/** Files OPA parses as JSON before hashing (bundle.IsStructuredDoc); data.yaml is not read by Portier. */
function isStructured(path: string): boolean {
  const base = path.slice(path.lastIndexOf("/") + 1);
  return base === "data.json" || base === ".manifest" || base === ".signatures.json";
}

/** JSON string as Go's encoding/json writes it with SetEscapeHTML(false) (OPA's encodePrimitive). */
function goString(s: string): string {
  return JSON.stringify(s).replace(/[\u2028\u2029]/g, (c) => (c === "\u2028" ? "\\u2028" : "\\u2029"));
}

const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const LITERAL = /(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/y;

/**
 * OPA's canonical JSON of a document: objects with keys in byte order, no whitespace, numbers exactly as
 * written (OPA decodes with UseNumber). A small parser, since JSON.parse loses how numbers were written.
 */
export function canonicalJson(text: string, what: string): string {
  let i = 0;
  const fail = (msg: string): never => {
    throw new EngineLoadError("bundle_invalid", `${what}: invalid JSON at position ${i} (${msg})`);
  };
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text.charAt(i))) i++;
  };
  const str = (): string => {
    STRING.lastIndex = i;
    const m = STRING.exec(text);
    if (!m) return fail("bad string");
    i += m[0].length;
    return JSON.parse(m[0]) as string;
  };
  const value = (depth: number): string => {
    if (depth > 1000) fail("nested too deep");
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      const members = new Map<string, string>();
      ws();
      if (text[i] === "}") {
        i++;
        return "{}";
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail("expected a key");
        const key = str();
        ws();
        if (text[i] !== ":") fail('expected ":"');
        i++;
        members.set(key, value(depth + 1));
        ws();
        if (text[i] === ",") i++;
        else if (text[i] === "}") {
          i++;
          break;
        } else fail('expected "," or "}"');
      }
      const sorted = [...members].sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
      return `{${sorted.map(([k, v]) => `${goString(k)}:${v}`).join(",")}}`;
    }
    if (c === "[") {
      i++;
      const items: string[] = [];
      ws();
      if (text[i] === "]") {
        i++;
        return "[]";
      }
      for (;;) {
        items.push(value(depth + 1));
        ws();
        if (text[i] === ",") i++;
        else if (text[i] === "]") {
          i++;
          break;
        } else fail('expected "," or "]"');
      }
      return `[${items.join(",")}]`;
    }
    if (c === '"') return goString(str());
    LITERAL.lastIndex = i;
    const m = LITERAL.exec(text);
    if (!m) return fail("unexpected token");
    i += m[0].length;
    return m[0];
  };
  const out = value(0);
  ws();
  if (i !== text.length) fail("data after the document");
  return out;
}

/** The SHA-256 of one bundle file as OPA computes it (path without the leading slash, as OPA names it). */
export function fileHash(path: string, bytes: Buffer): string {
  const content = isStructured(path) ? Buffer.from(canonicalJson(bytes.toString("utf8"), path), "utf8") : bytes;
  return createHash("sha256").update(content).digest("hex");
}

/** The payload OPA signs: every file but /.signatures.json, with its hash. */
export function bundleFileHashes(files: Map<string, Buffer>): FileHash[] {
  return [...files]
    .filter(([path]) => path !== SIGNATURES_FILE)
    .map(([path, bytes]) => ({ name: path.replace(/^\/+/, ""), hash: fileHash(path, bytes), algorithm: "SHA-256" }));
}

/** A verification key: a PEM public key (or certificate) used with one algorithm, or a JWKS. */
export type VerificationKey = { kind: "pem"; key: KeyObject; alg: string } | { kind: "jwks"; jwks: JSONWebKeySet };

/** Reads --verification-key: a JWKS (JSON with "keys") or a PEM public key / certificate. */
export function parseVerificationKey(text: string, source: string, alg = DEFAULT_SIGNING_ALG): VerificationKey {
  if (!isSigningAlg(alg))
    throw new Error(`${source}: signing algorithm "${alg}" is not one of ${SIGNING_ALGS.join(", ")}`);
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) {
    let jwks: unknown;
    try {
      jwks = JSON.parse(trimmed);
    } catch (err) {
      throw new Error(`${source}: not a JWKS (${messageOf(err)})`);
    }
    const keys = typeof jwks === "object" && jwks !== null && "keys" in jwks ? jwks.keys : undefined;
    if (!Array.isArray(keys) || keys.length === 0)
      throw new Error(`${source}: a JWKS must have a non-empty "keys" array`);
    keys.forEach((k: unknown, n) => {
      if (typeof k !== "object" || k === null || "d" in k || ("kty" in k && k.kty === "oct"))
        throw new Error(`${source}: keys[${n}] must be a public key (no "d", not "oct")`);
    });
    return { kind: "jwks", jwks: jwks as JSONWebKeySet };
  }
  let key: KeyObject;
  try {
    key = createPublicKey(trimmed);
  } catch (err) {
    throw new Error(`${source}: not a PEM public key, certificate or JWKS (${messageOf(err)})`);
  }
  if (key.type !== "public") throw new Error(`${source}: must be a public key`);
  return { kind: "pem", key, alg };
}

function refuse(source: string, why: string): never {
  throw new EngineLoadError("signature_invalid", `${source}: bundle signature: ${why}`);
}

/**
 * Checks /.signatures.json of an untarred bundle against the key: exactly one JWS (as OPA), a valid
 * signature with an allowed algorithm, an empty scope, and every other file listed with its hash.
 */
export async function verifyBundleSignature(
  files: Map<string, Buffer>,
  source: string,
  key: VerificationKey,
): Promise<void> {
  const sigBytes = files.get(SIGNATURES_FILE);
  if (!sigBytes) refuse(source, "the bundle is unsigned (no /.signatures.json) and --verification-key is set");
  let signatures: unknown;
  try {
    signatures = (JSON.parse(sigBytes.toString("utf8")) as { signatures?: unknown }).signatures;
  } catch (err) {
    refuse(source, `/.signatures.json is not JSON (${messageOf(err)})`);
  }
  if (!Array.isArray(signatures) || signatures.length !== 1 || typeof signatures[0] !== "string") {
    refuse(source, `/.signatures.json must hold "signatures": [one compact JWS]`);
  }
  let payload: Uint8Array;
  try {
    const verified =
      key.kind === "pem"
        ? await compactVerify(signatures[0], key.key, { algorithms: [key.alg] })
        : await compactVerify(signatures[0], createLocalJWKSet(key.jwks), { algorithms: [...SIGNING_ALGS] });
    payload = verified.payload;
  } catch (err) {
    refuse(source, `the JWS in /.signatures.json does not verify with the verification key (${messageOf(err)})`);
  }
  let listed: unknown;
  try {
    listed = JSON.parse(Buffer.from(payload).toString("utf8"));
  } catch {
    refuse(source, "the signed payload is not JSON");
  }
  const claims = listed as { files?: unknown; scope?: unknown };
  if (claims.scope !== undefined && claims.scope !== "")
    refuse(
      source,
      `the signature has scope ${JSON.stringify(claims.scope)}; Portier verifies only unscoped signatures`,
    );
  if (!Array.isArray(claims.files)) refuse(source, 'the signed payload has no "files" list');
  const expected = new Map<string, FileHash>();
  for (const f of claims.files as FileHash[]) {
    if (typeof f?.name !== "string" || typeof f.hash !== "string")
      refuse(source, "the signed file list has an entry without name or hash");
    if (f.algorithm !== "SHA-256")
      refuse(source, `${f.name}: hash algorithm ${JSON.stringify(f.algorithm)} is not supported (SHA-256)`);
    expected.set(f.name.replace(/^\/+/, ""), f);
  }
  for (const [path, bytes] of files) {
    if (path === SIGNATURES_FILE) continue;
    const name = path.replace(/^\/+/, "");
    const want = expected.get(name);
    if (!want) refuse(source, `file /${name} is not included in the signature`);
    if (fileHash(path, bytes) !== want.hash.toLowerCase())
      refuse(source, `file /${name} does not match its signed hash (tampered?)`);
    expected.delete(name);
  }
  if (expected.size > 0)
    refuse(source, `signed file(s) missing from the bundle: ${[...expected.keys()].map((n) => `/${n}`).join(", ")}`);
}

/** Signs the files like `opa build --signing-key`: returns the content of /.signatures.json. */
export async function signBundleFiles(
  files: Map<string, Buffer>,
  privateKeyPem: string,
  alg = DEFAULT_SIGNING_ALG,
  keyId = DEFAULT_KEY_ID,
): Promise<Buffer> {
  if (!isSigningAlg(alg)) throw new Error(`signing algorithm "${alg}" is not one of ${SIGNING_ALGS.join(", ")}`);
  const key = createPrivateKey(privateKeyPem);
  const payload = JSON.stringify({ files: bundleFileHashes(files), keyid: keyId });
  const jws = await new CompactSign(Buffer.from(payload)).setProtectedHeader({ alg, kid: keyId, typ: "JWT" }).sign(key);
  return Buffer.from(JSON.stringify({ signatures: [jws] }));
}
