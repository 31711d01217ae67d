/**
 * What every endpoint handler shares: configuration, loaded users and clients, keys, token factory and
 * the grant store.
 */
import type { Logger } from "pino";
import type { GrantStore } from "./grant-store.js";
import type { KeyRing } from "./keys.js";
import type { IssuerConfig } from "./options.js";
import type { IssuerClient, IssuerUser } from "./sample-data.js";
import type { TokenFactory } from "./token-factory.js";

export const PATHS = {
  discovery: "/.well-known/openid-configuration",
  jwks: "/.well-known/openid-configuration/jwks",
  authorize: "/connect/authorize",
  login: "/connect/login",
  token: "/connect/token",
  userinfo: "/connect/userinfo",
} as const;

export interface IssuerContext {
  config: IssuerConfig;
  users: readonly IssuerUser[];
  usersByName: ReadonlyMap<string, IssuerUser>;
  usersBySub: ReadonlyMap<string, IssuerUser>;
  clients: ReadonlyMap<string, IssuerClient>;
  keys: KeyRing;
  tokens: TokenFactory;
  grants: GrantStore;
  logger: Logger;
  /** The documented dev password, shown on the login page when the bundled sample users are loaded. */
  samplePasswordHint?: string;
}

export function endpointUrl(ctx: IssuerContext, path: string): string {
  return `${ctx.config.issuerUrl}${path}`;
}
