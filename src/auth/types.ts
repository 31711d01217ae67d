/**
 * The token-verification contract the service relies on. Implementation lives beside this file.
 */
import type { ReloadStatus } from "../reload/index.js";

/** Stable codes of every rejection; the service maps each to 401 + RFC 6750 WWW-Authenticate. */
export type TokenErrorCode =
  | "token_missing"
  | "token_malformed"
  | "token_too_large"
  | "alg_not_allowed"
  | "kid_unknown"
  | "signature_invalid"
  | "issuer_mismatch"
  | "audience_mismatch"
  | "token_expired"
  | "token_not_yet_valid"
  | "typ_invalid"
  | "id_token_not_accepted"
  | "claims_invalid"
  | "crit_unsupported"
  | "keys_unavailable"
  // ID token validation (client side, spec 2.1 / 5.4)
  | "nonce_mismatch"
  | "at_hash_mismatch"
  | "s_hash_mismatch";

/** Claims after verification, with list claims normalised to arrays. Unknown extra claims are kept. */
export interface NormalisedClaims {
  iss: string;
  exp: number;
  sub?: string;
  client_id?: string;
  aud: string[];
  scope: string[];
  amr: string[];
  tenant_id?: string;
  auth_time?: number;
  idp?: string;
  nbf?: number;
  iat?: number;
  nonce?: string;
  at_hash?: string;
  s_hash?: string;
  sid?: string;
  jti?: string;
  [claim: string]: unknown;
}

export interface VerifiedAccessToken {
  claims: NormalisedClaims;
  /** Protected header as sent (alg, kid, typ ...). */
  header: Record<string, unknown>;
  /** True when the answer came from the verified-token cache. */
  cached: boolean;
}

/** The key set's reload status (see src/reload/status.ts) plus what the verifier needs. */
export interface KeyStatus extends ReloadStatus {
  /** Keys have been loaded at least once. */
  ready: boolean;
  keyCount: number;
  /** Successful fetches or reads. */
  refreshes: number;
  refreshFailures: number;
}

/** The project's choices the verifier applies (the service reads them from the live bundle). */
export interface AccessTokenShape {
  /** The claim naming the subject: a token without it is a client-credentials token. */
  readonly subjectClaim: string;
  /** The audience a client-credentials token must carry, or null for none. */
  readonly applicationAudience: string | null;
}

export interface VerifierOptions {
  /** Exact expected `iss` ({auth_url}). */
  issuer: string;
  /** JWKS URL; when absent and no jwksFile, discovered from {issuer}/.well-known/openid-configuration. */
  jwksUri?: string;
  /** Local JWKS file for offline use (instead of any URL). */
  jwksFile?: string;
  /** Default ["RS256", "PS256", "ES256"]; "none" and HS* are always refused. */
  algorithms?: string[];
  /** Default 30. */
  clockToleranceSec?: number;
  /** When true, header typ must be at+jwt (RFC 9068). Default false (at+jwt accepted, JWT/absent too). */
  requireAtJwtTyp?: boolean;
  /** Size cap checked before decoding. Default 8192 bytes. */
  maxTokenBytes?: number;
  /** Minimum time between two refreshes triggered by an unknown kid. Default 30000. */
  refreshCooldownMs?: number;
  /** Verified-token cache size (entries). Default 10000; 0 disables. */
  cacheSize?: number;
  /** Injected clock for tests, seconds since epoch. */
  now?: () => number;
  /**
   * Background key refresh period, so removed keys are noticed without an unknown kid: a JWKS URL is
   * fetched this often, a JWKS file is watched and checked for changes this often. Default 300000; 0 disables.
   */
  refreshIntervalMs?: number;
  /** Watch a jwksFile for changes (near-instant rotation); the periodic check runs either way. Default true. */
  watchJwksFile?: boolean;
  /**
   * The project's token shape, asked at every verification (cached answers too), so that a reloaded project
   * applies at once. Default: the spec's (sub; audience apiclients).
   */
  tokenShape?: () => AccessTokenShape;
  /** Told about key refresh failures (pino-compatible); the token is never passed. */
  logger?: { warn(obj: object, msg?: string): void; info?(obj: object, msg?: string): void };
}

export interface AccessTokenVerifier {
  /** Verifies an access token; throws TokenError. */
  verify(token: string): Promise<VerifiedAccessToken>;
  /** Resolves once keys are loaded (rejects with TokenError keys_unavailable after a failed first load). */
  ready(): Promise<void>;
  status(): KeyStatus;
  close(): void;
}
