/**
 * Checks VerifierOptions and fills in defaults; a mistake throws TypeError naming the option.
 */
import { SPEC_ACCESS_TOKEN_SHAPE } from "./classify-access-token.js";
import type { AccessTokenShape, VerifierOptions } from "./types.js";

export const DEFAULT_ALGORITHMS = ["RS256", "PS256", "ES256"];

/** A `--jwks FILE|URL` value as verifier options: an http(s) URL is fetched (jwksUri), anything else is a file. */
export function jwksSource(jwks: string | undefined): Pick<VerifierOptions, "jwksUri" | "jwksFile"> {
  if (jwks === undefined) return {};
  return /^https?:\/\//.test(jwks) ? { jwksUri: jwks } : { jwksFile: jwks };
}

export interface ResolvedOptions {
  issuer: string;
  jwksUri: string | undefined;
  jwksFile: string | undefined;
  algorithms: ReadonlySet<string>;
  clockToleranceSec: number;
  requireAtJwtTyp: boolean;
  maxTokenBytes: number;
  refreshCooldownMs: number;
  cacheSize: number;
  now: () => number;
  tokenShape: () => AccessTokenShape;
  refreshIntervalMs: number;
  watchJwksFile: boolean;
  logger: VerifierOptions["logger"];
}

function nonNegative(name: string, v: unknown, dflt: number): number {
  if (v === undefined) return dflt;
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0)
    throw new TypeError(`option ${name} must be a non-negative number`);
  return v;
}

export function checkAlgorithms(name: string, v: unknown, dflt: string[]): ReadonlySet<string> {
  if (v === undefined) return new Set(dflt);
  if (!Array.isArray(v) || v.length === 0 || !v.every((a): a is string => typeof a === "string"))
    throw new TypeError(`option ${name} must be a non-empty list of algorithm names`);
  for (const a of v) {
    const l = a.toLowerCase();
    if (l === "none" || l.startsWith("hs"))
      throw new TypeError(`option ${name} may not contain ${a}: none and HMAC are never accepted`);
  }
  return new Set(v);
}

export function resolveOptions(o: VerifierOptions): ResolvedOptions {
  if (!o || typeof o !== "object") throw new TypeError("options must be an object");
  if (typeof o.issuer !== "string" || o.issuer.length === 0)
    throw new TypeError("option issuer must be a non-empty string");
  if (o.jwksUri !== undefined) {
    if (typeof o.jwksUri !== "string" || !/^https?:\/\//.test(o.jwksUri))
      throw new TypeError("option jwksUri must be an http(s) URL");
  }
  if (o.jwksFile !== undefined && (typeof o.jwksFile !== "string" || o.jwksFile.length === 0))
    throw new TypeError("option jwksFile must be a file path");
  if (o.jwksUri !== undefined && o.jwksFile !== undefined)
    throw new TypeError("options jwksUri and jwksFile are exclusive");
  if (o.jwksUri === undefined && o.jwksFile === undefined && !/^https?:\/\//.test(o.issuer))
    throw new TypeError("option issuer must be an http(s) URL for discovery (or give jwksUri / jwksFile)");
  if (o.requireAtJwtTyp !== undefined && typeof o.requireAtJwtTyp !== "boolean")
    throw new TypeError("option requireAtJwtTyp must be a boolean");
  if (o.watchJwksFile !== undefined && typeof o.watchJwksFile !== "boolean")
    throw new TypeError("option watchJwksFile must be a boolean");
  if (o.now !== undefined && typeof o.now !== "function") throw new TypeError("option now must be a function");
  if (
    o.logger !== undefined &&
    (typeof o.logger !== "object" || o.logger === null || typeof o.logger.warn !== "function")
  )
    throw new TypeError("option logger must have a warn() method");
  const maxTokenBytes = nonNegative("maxTokenBytes", o.maxTokenBytes, 8192);
  if (maxTokenBytes < 64) throw new TypeError("option maxTokenBytes must be at least 64");
  return {
    issuer: o.issuer,
    jwksUri: o.jwksUri,
    jwksFile: o.jwksFile,
    algorithms: checkAlgorithms("algorithms", o.algorithms, DEFAULT_ALGORITHMS),
    clockToleranceSec: nonNegative("clockToleranceSec", o.clockToleranceSec, 30),
    requireAtJwtTyp: o.requireAtJwtTyp ?? false,
    maxTokenBytes,
    refreshCooldownMs: nonNegative("refreshCooldownMs", o.refreshCooldownMs, 30_000),
    cacheSize: Math.floor(nonNegative("cacheSize", o.cacheSize, 10_000)),
    now: o.now ?? (() => Date.now() / 1000),
    tokenShape: o.tokenShape ?? (() => SPEC_ACCESS_TOKEN_SHAPE),
    refreshIntervalMs: nonNegative("refreshIntervalMs", o.refreshIntervalMs, 300_000),
    watchJwksFile: o.watchJwksFile ?? true,
    logger: o.logger,
  };
}
