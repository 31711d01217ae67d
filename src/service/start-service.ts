/**
 * Starts one service instance: logger, verifier, directory, policy (with reload), metrics, HTTP server.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync } from "node:fs";
import { pino, type Logger } from "pino";
import { createAccessTokenVerifier, type AccessTokenVerifier } from "../auth/index.js";
import { Directory } from "../directory/index.js";
import type { ServiceConfig } from "./config.js";
import { createApp } from "./app.js";
import { decisionListener } from "./fast-adapters.js";
import { createDecide, type Decide } from "./decide.js";
import { createMetrics } from "./metrics.js";
import { PolicyHolder } from "./policy.js";

export interface RunningService {
  url: string;
  server: Server;
  decide: Decide;
  policy: PolicyHolder;
  verifier: AccessTokenVerifier;
  directory: Directory | undefined;
  logger: Logger;
  close(): Promise<void>;
}

export class StartError extends Error {}

export async function startService(config: ServiceConfig, options: { logger?: Logger; listen?: boolean } = {}): Promise<RunningService> {
  // Decision lines are buffered (one write per 4 KiB instead of one per decision) and flushed at least
  // every 200 ms and on exit.
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  const flushTimer = setInterval(() => destination.flush(), 200);
  flushTimer.unref();
  process.once("exit", () => destination.flushSync());
  const logger =
    options.logger ??
    pino({ level: config.logLevel, base: { pid: process.pid }, redact: { paths: ["token", "authorization", "headers.authorization", "req.headers.authorization"], remove: true } }, destination);
  const jwks = config.jwks;
  const jwksOption = jwks === undefined ? {} : /^https?:\/\//.test(jwks) ? { jwksUri: jwks } : { jwksFile: jwks };
  if (jwks !== undefined && !/^https?:\/\//.test(jwks) && !existsSync(jwks)) throw new StartError(`config.jwks: file not found: ${jwks}`);
  if (config.directory !== undefined && !existsSync(config.directory)) throw new StartError(`config.directory: file not found: ${config.directory}`);
  const verifier = createAccessTokenVerifier({ issuer: config.issuer, ...jwksOption, logger });
  // Key loading runs in the background: readiness reports it; decisions deny keys_unavailable meanwhile.
  verifier.ready().catch((err: Error) => logger.warn({ event: "keys_unavailable", error: err.message }, "issuer keys not loaded yet"));

  const policy = new PolicyHolder(logger, config.bundleUrl ?? config.bundle);
  if (config.bundleUrl) {
    await policy.poll(config.bundleUrl, config.bundlePollSeconds);
  } else {
    const ok = await policy.load(config.bundle, config.bundle);
    if (!ok) {
      verifier.close();
      await policy.close();
      throw new StartError(`config.bundle: ${policy.status().lastError}`);
    }
    if (config.watch) policy.watchFile(config.bundle);
  }

  // Role names come from the loaded bundle's catalog (none until one is loaded); a new bundle re-resolves
  // the directory before it goes live, so names and policy activate together.
  let directory: Directory | undefined;
  if (config.directory) {
    const names = policy.resolveRole;
    try {
      directory = await Directory.open(config.directory, names, { watch: config.watch, logger });
    } catch (err) {
      verifier.close();
      await policy.close();
      throw new StartError(`config.directory: ${(err as Error).message}`);
    }
    const dir = directory;
    policy.prepareRoles = (resolve) => dir.prepareRoles(resolve);
    if (policy.resolveRole !== names) void dir.prepareRoles(policy.resolveRole).then((commit) => commit()); // a bundle landed while it opened
  }

  const metrics = createMetrics({ keys: () => verifier.status(), policy: () => policy.status(), directory: () => directory?.status() });
  const decide = createDecide({ verifier, policy, directory, rolesClaim: config.rolesClaim, roleCheck: config.roleCheck, logger, metrics });
  const app = createApp({ decide, verifier, policy, directory, metrics, maxBodyBytes: config.maxBodyBytes });
  const server = createServer(decisionListener(decide, config.maxBodyBytes, app, logger));
  server.keepAliveTimeout = 65_000;
  let url = "";
  if (options.listen !== false) {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(config.port, config.host, () => {
        server.off("error", reject);
        resolve();
      });
    });
    const addr = server.address() as AddressInfo;
    url = `http://${addr.address.includes(":") ? `[${addr.address}]` : addr.address}:${addr.port}`;
  }
  return {
    url,
    server,
    decide,
    policy,
    verifier,
    directory,
    logger,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      verifier.close();
      directory?.close();
      await policy.close();
      clearInterval(flushTimer);
      destination.flushSync();
    },
  };
}
