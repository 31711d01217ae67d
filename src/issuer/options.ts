/**
 * Options of the local development issuer and their defaults (token lifetimes, dev mode, data files).
 */
import { fileURLToPath } from "node:url";
import type { Logger } from "pino";
import { SPEC_ISSUER_TOKEN_SHAPE, type IssuerTokenShape } from "./token-shape.js";

// Sample data at the repository root, found from this file (same depth under src/ and dist/).
export const DEFAULT_USERS_FILE = fileURLToPath(new URL("../../data/sample/users.json", import.meta.url));
export const DEFAULT_CLIENTS_FILE = fileURLToPath(new URL("../../data/sample/clients.json", import.meta.url));
export const DEFAULT_DIRECTORY_FILE = fileURLToPath(new URL("../../data/sample/directory.json", import.meta.url));

export interface IssuerOptions {
  /** Exact `iss` of every token and base of every endpoint URL, without trailing slash ({auth_url}). */
  issuerUrl: string;
  /** Sample users file (default data/sample/users.json). */
  usersFile?: string;
  /** Registered clients file (default data/sample/clients.json). */
  clientsFile?: string;
  /** Access token lifetime in seconds (default 3600). */
  accessTtlSec?: number;
  /** ID token lifetime in seconds (default 300). */
  idTtlSec?: number;
  /** Authorization code lifetime in seconds (default 300). */
  codeTtlSec?: number;
  /**
   * Dev mode (default true): `login_hint=<username>` on /connect/authorize logs that user in without a
   * password, for tests and scripted demos. When false, login_hint only pre-fills the login form.
   */
  devMode?: boolean;
  /** Clock in seconds since the epoch (tests). Default: wall clock. */
  now?: () => number;
  /** The project's token shape (claims, scopes, application audience). Default: the spec's. */
  tokenShape?: IssuerTokenShape;
  /** Logger; default silent. Tokens, codes, passwords and secrets are never logged. */
  logger?: Logger;
}

export interface IssuerConfig {
  issuerUrl: string;
  usersFile: string;
  clientsFile: string;
  accessTtlSec: number;
  idTtlSec: number;
  codeTtlSec: number;
  devMode: boolean;
  now: () => number;
  tokenShape: IssuerTokenShape;
}

export function resolveConfig(options: IssuerOptions): IssuerConfig {
  const issuerUrl = normaliseIssuerUrl(options.issuerUrl);
  return {
    issuerUrl,
    usersFile: options.usersFile ?? DEFAULT_USERS_FILE,
    clientsFile: options.clientsFile ?? DEFAULT_CLIENTS_FILE,
    accessTtlSec: positiveSeconds("accessTtlSec", options.accessTtlSec ?? 3600),
    idTtlSec: positiveSeconds("idTtlSec", options.idTtlSec ?? 300),
    codeTtlSec: positiveSeconds("codeTtlSec", options.codeTtlSec ?? 300),
    devMode: options.devMode ?? true,
    now: options.now ?? (() => Math.floor(Date.now() / 1000)),
    tokenShape: options.tokenShape ?? SPEC_ISSUER_TOKEN_SHAPE,
  };
}

function normaliseIssuerUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`issuerUrl is not an absolute URL: ${value}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`issuerUrl must be http(s): ${value}`);
  if (url.search || url.hash) throw new Error(`issuerUrl must not have a query or fragment: ${value}`);
  return url.href.replace(/\/+$/, "");
}

function positiveSeconds(name: string, value: number): number {
  if (!Number.isInteger(value) || value <= 0)
    throw new Error(`${name} must be a positive integer number of seconds, got ${value}`);
  return value;
}
