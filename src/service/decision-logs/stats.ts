/**
 * The counts of the decision-log pipeline, kept as plain numbers (metrics.ts exposes them to Prometheus): what
 * was dropped and why, what the collector was sent and answered, what waits in the buffer.
 */

/** Why an accepted decision's event was not delivered. */
export const DROP_REASONS = ["buffer_full", "malformed", "too_large", "rule_error", "shutdown"] as const;
export type DropReason = (typeof DROP_REASONS)[number];

export const UPLOAD_RESULTS = ["ok", "failed", "malformed", "too_large"] as const;
export type UploadResult = (typeof UPLOAD_RESULTS)[number];

export interface DecisionLogStats {
  dropped: Record<DropReason, number>;
  /** Events the bundle's drop rule left out on purpose (not a loss). */
  ruleDropped: number;
  uploads: Record<UploadResult, number>;
  /** Uploads of a batch that had failed before. */
  retries: number;
  /** Compressed bytes the collector accepted, and the events in them. */
  sentBytes: number;
  sentEvents: number;
  /** Uncompressed event bytes waiting (queued or in a batch not yet delivered), and their count. */
  bufferedBytes: number;
  bufferedEvents: number;
  /** When the collector last accepted a batch (ms since the epoch), 0 before the first. */
  lastUploadOkMs: number;
}

export function newStats(): DecisionLogStats {
  return {
    dropped: { buffer_full: 0, malformed: 0, too_large: 0, rule_error: 0, shutdown: 0 },
    ruleDropped: 0,
    uploads: { ok: 0, failed: 0, malformed: 0, too_large: 0 },
    retries: 0,
    sentBytes: 0,
    sentEvents: 0,
    bufferedBytes: 0,
    bufferedEvents: 0,
    lastUploadOkMs: 0,
  };
}
