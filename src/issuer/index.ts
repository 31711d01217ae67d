/**
 * Public API of Portier's local identity issuer (spec 4.1) for development, demos and tests:
 * createIssuer builds a mountable express app, startIssuer serves it on loopback. Not for production.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Express } from "express";
import type { JWK } from "jose";
import { pino } from "pino";
import { buildApp } from "./app.js";
import type { IssuerContext } from "./context.js";
import { GrantStore } from "./grant-store.js";
import { createKeyRing } from "./keys.js";
import { DEFAULT_USERS_FILE, resolveConfig, type IssuerOptions } from "./options.js";
import { loadClients, loadUsers, type IssuerClient, type IssuerUser } from "./sample-data.js";
import { createTokenFactory } from "./token-factory.js";

export type { IssuerOptions } from "./options.js";
export { OIDC_SCOPES, SPEC_ISSUER_TOKEN_SHAPE, type IssuerTokenShape } from "./token-shape.js";
export { DEFAULT_CLIENTS_FILE, DEFAULT_DIRECTORY_FILE, DEFAULT_USERS_FILE } from "./options.js";
export type { IssuerClient, IssuerUser } from "./sample-data.js";
export { DataFileError, loadClients, loadUsers } from "./sample-data.js";

/** The documented password of every bundled sample user (data/sample/users.json). */
const SAMPLE_PASSWORD = "portier-dev";

export interface IssuerExtras {
  /** Exact `iss` of its tokens, without trailing slash. */
  readonly issuerUrl: string;
  /** Whether login_hint signs users in without a password. */
  readonly devMode: boolean;
  readonly users: readonly IssuerUser[];
  readonly clients: readonly IssuerClient[];
  /** The published JWKS (current key first, then the previous one). */
  jwks(): { keys: JWK[] };
  /** New signing key for new tokens; the previous key stays published. Returns the new kid. */
  rotateKeys(): Promise<{ kid: string }>;
}

/** The issuer: an express app (mount it or pass it to http.createServer) with its state attached. */
export type Issuer = Express & IssuerExtras;

export interface StartIssuerOptions extends Omit<IssuerOptions, "issuerUrl"> {
  /** Default: http://{host}:{actual port}. */
  issuerUrl?: string;
  /** Default 0 (any free port). */
  port?: number;
  /** Default 127.0.0.1 (loopback). */
  host?: string;
}

export interface RunningIssuer {
  url: string;
  issuer: Issuer;
  close(): Promise<void>;
}

export async function createIssuer(options: IssuerOptions): Promise<Issuer> {
  return (await prepareIssuer(options))(options.issuerUrl);
}

/**
 * The slow and fallible part of building an issuer (options, data files, key generation), done before its
 * URL is known; the function it returns builds the app at once, so a server can listen only when ready.
 */
async function prepareIssuer(
  options: Omit<IssuerOptions, "issuerUrl"> & { issuerUrl?: string },
): Promise<(issuerUrl: string) => Issuer> {
  // Checks every option now (a URL still to be derived from the port with a stand-in).
  const { usersFile, clientsFile } = resolveConfig({ ...options, issuerUrl: options.issuerUrl ?? "http://127.0.0.1" });
  const users = loadUsers(usersFile);
  const clients = loadClients(clientsFile);
  const keys = await createKeyRing();
  return (issuerUrl) => {
    const config = resolveConfig({ ...options, issuerUrl });
    const ctx: IssuerContext = {
      config,
      users,
      usersByName: new Map(users.map((u) => [u.preferred_username, u])),
      usersBySub: new Map(users.map((u) => [u.sub, u])),
      clients: new Map(clients.map((c) => [c.client_id, c])),
      keys,
      tokens: createTokenFactory({
        issuerUrl: config.issuerUrl,
        accessTtlSec: config.accessTtlSec,
        idTtlSec: config.idTtlSec,
        now: config.now,
        keys,
        shape: config.tokenShape,
      }),
      grants: new GrantStore(config.codeTtlSec, config.accessTtlSec, config.now),
      logger: options.logger ?? pino({ level: "silent" }),
      ...(usersFile === DEFAULT_USERS_FILE ? { samplePasswordHint: SAMPLE_PASSWORD } : {}),
    };
    const extras: IssuerExtras = {
      issuerUrl: config.issuerUrl,
      devMode: config.devMode,
      users,
      clients,
      jwks: () => keys.jwks(),
      rotateKeys: async () => {
        const rotated = await keys.rotate();
        ctx.logger.info({ event: "keys_rotated", kid: rotated.kid }, "signing key rotated");
        return rotated;
      },
    };
    return Object.assign(buildApp(ctx), extras);
  };
}

export async function startIssuer(options: StartIssuerOptions = {}): Promise<RunningIssuer> {
  const host = options.host ?? "127.0.0.1";
  // Keys and data first: the port opens only when every request can be answered.
  const build = await prepareIssuer(options);
  let issuer: Issuer | undefined;
  const server = createServer((req, res) => {
    issuer!(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      // Synchronously in the listening callback, before any connection can be read.
      const { port } = server.address() as AddressInfo;
      try {
        issuer = build(options.issuerUrl ?? `http://${host.includes(":") ? `[${host}]` : host}:${port}`);
        resolve();
      } catch (err) {
        void closeServer(server).finally(() => reject(err instanceof Error ? err : new Error(String(err))));
      }
    });
  });
  return { url: issuer!.issuerUrl, issuer: issuer!, close: () => closeServer(server) };
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((err) => (err ? reject(err) : resolve()));
    server.closeAllConnections();
  });
}
