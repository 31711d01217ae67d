/**
 * The status of one reloaded source, kept the way OPA keeps its bundle status: when the last request was
 * made, when one last succeeded (a 304 / unchanged file counts), when a new value was last activated, the
 * last HTTP code, and the last error, which the next success clears.
 */

export interface ReloadStatus {
  /** Where the value comes from, redacted (no userinfo, no query values). */
  source: string;
  /** A value has been activated at least once. */
  loaded: boolean;
  lastRequest?: string;
  lastSuccessfulRequest?: string;
  lastSuccessfulActivation?: string;
  lastHttpCode?: number;
  /** The last failure (refused, unreachable, invalid), cleared by the next successful request. */
  lastError?: string;
  /** Successful requests (activations and unchanged answers). */
  successfulRequests: number;
  /** Successful activations after the first. */
  reloads: number;
  /** Failed or refused attempts. */
  reloadFailures: number;
  /** Failed attempts since the last success (drives back-off). */
  consecutiveFailures: number;
}

export function newStatus(source: string): ReloadStatus {
  return { source, loaded: false, successfulRequests: 0, reloads: 0, reloadFailures: 0, consecutiveFailures: 0 };
}
