/**
 * The files the service reads at start, checked before any is opened: a missing one is a start-up failure
 * naming the option and what to pass.
 */
import { existsSync } from "node:fs";
import { jwksSource } from "../../auth/index.js";
import type { ServiceConfig } from "../config.js";
import { StartError } from "../start-error.js";

export function checkInputFiles(config: ServiceConfig): void {
  const jwksFile = jwksSource(config.jwks).jwksFile;
  if (jwksFile !== undefined && !existsSync(jwksFile))
    throw new StartError(
      `config.jwks: file not found: ${config.jwks} ` +
        "(pass the issuer's JWKS file or URL, or omit --jwks to use discovery)",
    );
  if (config.directory !== undefined && !existsSync(config.directory))
    throw new StartError(`config.directory: file not found: ${config.directory} (pass the synced-users file)`);
  if (config.bundleUrl === undefined && !existsSync(config.bundle)) {
    throw new StartError(
      `config.bundle: file not found: ${config.bundle} (run make build, or pass --bundle FILE or --bundle-url URL)`,
    );
  }
  if (config.shadowBundle !== undefined && !existsSync(config.shadowBundle))
    throw new StartError(
      `config.shadowBundle: file not found: ${config.shadowBundle} ` +
        "(pass the candidate bundle, or drop --shadow-bundle)",
    );
}
