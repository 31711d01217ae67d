/**
 * The issuer's keys: the verifier of access tokens. Key loading runs in the background: readiness reports it;
 * decisions deny keys_unavailable meanwhile. A JWKS file is read before the service listens (a broken one is a
 * start-up failure); keys from the network too with --require-keys-at-start.
 */
import type { Logger } from "pino";
import {
  createAccessTokenVerifier,
  jwksSource,
  type AccessTokenShape,
  type AccessTokenVerifier,
} from "../../auth/index.js";
import { SPEC_TOKEN_SHAPE } from "../../engine/index.js";
import type { ServiceConfig } from "../config.js";
import type { Part } from "../part-stack.js";
import { StartError } from "../start-error.js";

/** `shape`: the live bundle's token shape (undefined before a bundle is loaded: the spec's). */
export async function issuerKeys(
  config: ServiceConfig,
  logger: Logger,
  shape: () => AccessTokenShape | undefined = () => undefined,
): Promise<Part<AccessTokenVerifier>> {
  const jwks = jwksSource(config.jwks);
  const verifier = createAccessTokenVerifier({
    issuer: config.issuer,
    ...jwks,
    tokenShape: () => shape() ?? SPEC_TOKEN_SHAPE,
    refreshIntervalMs: config.jwksRefreshSeconds * 1000,
    watchJwksFile: config.watch,
    logger,
  });
  const part: Part<AccessTokenVerifier> = { value: verifier, close: { parts: () => verifier.close() } };
  if (!config.requireKeysAtStart && !("jwksFile" in jwks)) {
    verifier
      .ready()
      .catch((err: Error) =>
        logger.warn({ event: "keys_unavailable", error: err.message }, "issuer keys not loaded yet"),
      );
    return part;
  }
  try {
    await verifier.ready();
    return part;
  } catch {
    verifier.close();
    const st = verifier.status();
    throw new StartError(
      "jwksFile" in jwks
        ? `config.jwks: ${config.jwks}: ${st.lastError ?? "unknown error"} (pass a JWKS file: {"keys": [...]})`
        : `issuer keys: cannot load them from ${st.source}: ${st.lastError ?? "unknown error"} ` +
            `(--require-keys-at-start is set; check --issuer and --jwks)`,
    );
  }
}
