/**
 * The directory of synced users (--directory FILE or --directory-url URL), when one is configured. It keeps
 * role names as written; each decision resolves them with the names of the bundle that evaluates it
 * (policy.current), so the directory loads without a bundle and a bundle swap re-reads nothing. Its guards
 * count the records the live bundle's names resolve; when a bundle goes live, the records its names cannot
 * resolve are counted again and reported (not refused: a policy change is authoritative, and fewer roles is the
 * fail-closed direction). A directory server that is down at start leaves the service not ready (and polling).
 * With --scim-token-file and neither, the directory holds the users SCIM provisions (Directory.provisioned).
 */
import type { Logger } from "pino";
import { Directory } from "../../directory/index.js";
import { messageOf } from "../../errors/caught.js";
import type { ServiceConfig } from "../config.js";
import type { Part } from "../part-stack.js";
import type { PolicyHolder, PolicySnapshot } from "../policy.js";
import { StartError } from "../start-error.js";

export async function syncedUsers(
  config: ServiceConfig,
  logger: Logger,
  policy: PolicyHolder,
): Promise<Part<Directory | undefined>> {
  if (!config.directory && !config.directoryUrl && !config.scimTokenFile) return { value: undefined };
  const live = policy.current;
  const options = {
    watch: config.watch,
    logger,
    // The guards count the records these names resolve: what a decision will see.
    roles: live && { resolve: live.rolesOf, bundle: live.engine.revision },
    maxShrink: config.directoryMaxShrink,
    allowShrink: config.allowDirectoryShrink,
    shrinkWindowMs: config.directoryShrinkWindowSeconds * 1000,
  };
  const url = config.directoryUrl && {
    url: config.directoryUrl,
    pollSeconds: config.directoryPollSeconds,
    maxBytes: config.directoryMaxBytes,
  };
  let directory: Directory;
  try {
    directory = url
      ? await Directory.poll(url, options)
      : config.directory
        ? await Directory.open(config.directory, options)
        : await Directory.provisioned(options);
  } catch (err) {
    throw new StartError(`config.directory: ${messageOf(err)}`);
  }
  const check = (p: PolicySnapshot) => directory.checkRoles(p.rolesOf, p.engine.revision);
  policy.onActivate = check;
  if (policy.current) check(policy.current);
  return { value: directory, close: { parts: () => directory.close() } };
}
