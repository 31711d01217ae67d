/**
 * The AuthZEN endpoints (src/service/authzen), when a PEP credential is configured: a PEP key file that cannot be
 * read stops the start, naming the option. Nothing to close: the endpoints hold no resource of their own.
 */
import { messageOf } from "../../errors/caught.js";
import { startAuthzen, type AuthzenParts } from "../authzen/start-authzen.js";
import type { ServiceConfig } from "../config.js";
import { StartError } from "../start-error.js";

export function authzenEndpoints(config: ServiceConfig, parts: AuthzenParts): ReturnType<typeof startAuthzen> {
  try {
    return startAuthzen(config, parts);
  } catch (err) {
    throw new StartError(`config.authzenPepKeyFile: ${messageOf(err)}`);
  }
}
