/**
 * Fail-safe reloading of hot inputs: sources (watched file, polled URL), validate-then-swap with a guard,
 * an OPA-like status, and URL redaction; and the one HTTP client and the one back-off of every outbound call.
 * Depends on nothing else in Portier, so auth, directory and service all use it.
 */
export { Reloader, NOT_MODIFIED } from "./reloader.js";
export type { ReloaderOptions, LoadContext, ReloadLogger } from "./reloader.js";
export type { ReloadStatus } from "./status.js";
export { fetchUrl, openUrl } from "./fetch-url.js";
export { sendRequest, httpTarget, byteCap, FetchError, type HttpExchange, type HttpTarget } from "./http-client.js";
export { backoffMs } from "./backoff.js";

export { redactUrls } from "./redact-url.js";
