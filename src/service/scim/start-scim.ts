/**
 * --scim-token-file: the SCIM service provider as one part of the service. Reads the token file (a bad one is a
 * start-up failure), opens the store (--scim-journal replayed, or --scim-postgres-url loaded and followed) into the
 * directory, and gives the router, the status for /ready and the metrics, and the close (in the stop's "parts"
 * stage: after the accepted requests are answered, so a write in flight is stored before the store closes).
 */
import type { Logger } from "pino";
import type { Directory } from "../../directory/index.js";
import { messageOf } from "../../errors/caught.js";
import type { ServiceConfig } from "../config.js";
import { TokenFile } from "../decision-logs/token-file.js";
import { JournalStore } from "./journal-store.js";
import { PostgresStore } from "./postgres-store.js";
import { scimRouter } from "./routes.js";
import { ScimService, type ScimStatus } from "./scim-service.js";
import type { ScimStore } from "./store.js";
import type express from "express";
import type { Part } from "../part-stack.js";
import { StartError } from "../start-error.js";

/** Removals within the de-provisioning window always allowed, whatever the share (a directory of a few users). */
const DEPROVISION_FLOOR = 10;
/** A hold stays a problem on /ready this long after it happened. */
const HELD_PROBLEM_MS = 3_600_000;

export interface RunningScim {
  router: express.Router;
  service: ScimService;
  status(): ScimStatus;
  /** What /ready lists as a problem (still ready): a recent hold, a failing store, a lagging replica. */
  problem(): string | undefined;
  close(): Promise<void>;
}

/** The part (undefined without --scim-token-file); a StartError names the option at fault. */
export async function scimProvider(
  config: ServiceConfig,
  directory: Directory | undefined,
  logger: Logger,
): Promise<Part<RunningScim | undefined>> {
  if (!config.scimTokenFile || !directory) return { value: undefined };
  const scim = await startScim(config, directory, logger);
  return { value: scim, close: { parts: () => scim.close() } };
}

async function startScim(config: ServiceConfig, directory: Directory, logger: Logger): Promise<RunningScim> {
  let tokenFile: TokenFile;
  try {
    tokenFile = new TokenFile(config.scimTokenFile!);
  } catch (err) {
    throw new StartError(`config.scimTokenFile: ${messageOf(err)}`);
  }
  const warn = (obj: object, msg: string) => logger.warn(obj, msg);
  const store: ScimStore = config.scimPostgresUrl
    ? new PostgresStore(config.scimPostgresUrl, { logger })
    : new JournalStore(config.scimJournal!, warn);
  const service = new ScimService(store, directory, {
    mapping: {
      sub: config.scimSubAttribute,
      tenantAttribute: config.scimTenantAttribute,
      tenantId: config.scimTenantId,
    },
    limits: { maxOperations: config.scimMaxOperations, maxResources: config.scimMaxResources },
    guard: {
      maxShare: config.scimMaxDeprovisionShare,
      windowMs: config.scimDeprovisionWindowSeconds * 1000,
      floor: DEPROVISION_FLOOR,
    },
  });
  try {
    await service.open();
  } catch (err) {
    await store.close().catch(() => undefined);
    const option = config.scimPostgresUrl ? "config.scimPostgresUrl" : "config.scimJournal";
    throw new StartError(`${option}: ${messageOf(err)}`);
  }
  const status = () => service.status();
  const s = service.status();
  logger.info(
    { event: "scim_loaded", revision: s.revision, users: s.users, groups: s.groups, store: s.store.kind },
    "SCIM service provider on /scim/v2",
  );
  return {
    router: scimRouter(service, {
      token: () => tokenFile.current(),
      maxBodyBytes: config.scimMaxBodyBytes,
      maxPageSize: config.scimMaxPageSize,
      maxOperations: config.scimMaxOperations,
      logger,
    }),
    service,
    status,
    problem() {
      const st = service.status();
      const problems: string[] = [];
      if (st.lastHeldAt && Date.now() - Date.parse(st.lastHeldAt) < HELD_PROBLEM_MS)
        problems.push(`scim: ${st.held} change(s) held by the de-provisioning guard; last: ${st.lastHeld}`);
      if (typeof st.store.lastError === "string") problems.push(`scim: store: ${st.store.lastError}`);
      if (tokenFile.lastError)
        problems.push(`scim: token file refused, the previous token stays: ${tokenFile.lastError}`);
      return problems.length ? problems.join("; ") : undefined;
    },
    close: () => service.close(),
  };
}
