/**
 * Token verification for Portier: access tokens on API calls, ID tokens for client applications,
 * the issuer's keys, and the errors the service turns into 401 + WWW-Authenticate.
 */
export * from "./types.js";
export { TokenError, wwwAuthenticate } from "./token-error.js";
export { createAccessTokenVerifier, type PortierAccessTokenVerifier } from "./create-access-token-verifier.js";
export { validateIdToken } from "./validate-id-token.js";
export { halfHash } from "./half-hash.js";
export { bearerToken } from "./bearer-token.js";
export { jwksSource } from "./resolve-options.js";
export { findDuplicateKey } from "./find-duplicate-key.js";
