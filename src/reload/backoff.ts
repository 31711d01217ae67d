/**
 * The one back-off of Portier's outbound calls (polled bundle, directory and key URLs, the key set retried until
 * loaded, the decision-log collector, the SCIM store's database): the wait after `failures` failures in a row is
 * `firstMs` doubling with each further failure, at most `maxMs`. With `jitter` j (0..1) the wait is drawn
 * between (1 - j) of it and all of it, so that replicas failing together do not come back together; 0 (the
 * default) waits exactly that long.
 */

export interface Backoff {
  /** The wait after the first failure (and the wait with none). */
  firstMs: number;
  /** The longest wait. */
  maxMs: number;
  /** Share of the wait drawn at random, 0..1 (default 0). */
  jitter?: number | undefined;
  /** [0, 1): the jitter's source (tests pin it). */
  random?: (() => number) | undefined;
}

export function backoffMs(failures: number, b: Backoff): number {
  const ceiling = Math.min(b.maxMs, b.firstMs * 2 ** Math.min(30, Math.max(0, failures - 1)));
  const jitter = b.jitter ?? 0;
  return jitter === 0 ? ceiling : ceiling * (1 - jitter) + ceiling * jitter * (b.random ?? Math.random)();
}
