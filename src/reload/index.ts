/**
 * Fail-safe reloading of hot inputs: sources (watched file, polled URL), validate-then-swap with a guard,
 * an OPA-like status, and URL redaction. Depends on nothing else in Portier, so auth, directory and
 * service all use it.
 */
export { Reloader, NOT_MODIFIED } from "./reloader.js";
export type { ReloaderOptions, LoadContext, ReloadLogger } from "./reloader.js";
export type { ReloadStatus } from "./status.js";
export { fetchUrl, openUrl, byteCap, FetchError } from "./fetch-url.js";

export { redactUrls } from "./redact-url.js";
