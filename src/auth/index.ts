/**
 * Token verification for Portier: access tokens on API calls, ID tokens for client applications,
 * the issuer's keys, and the errors the service turns into 401 + WWW-Authenticate.
 */
export * from "./types.js";
export { TokenError, wwwAuthenticate } from "./token-error.js";
export { createAccessTokenVerifier, type PortierAccessTokenVerifier } from "./create-access-token-verifier.js";
export { validateIdToken, halfHash, ID_TOKEN_ALGORITHMS, type ValidateIdTokenOptions } from "./validate-id-token.js";
export { DEFAULT_ALGORITHMS } from "./resolve-options.js";
export { API_AUDIENCE } from "./classify-access-token.js";
export { findDuplicateKey } from "./find-duplicate-key.js";
