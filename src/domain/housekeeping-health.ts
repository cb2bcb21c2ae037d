/**
 * What a housekeeping job's (retention, digest) recent firings say about its
 * replica. A job fires hourly or daily, not every second like a loop: a
 * verdict drawn from its last firing can be an hour or a day old, and a load
 * balancer must not take a replica that serves and whose loops work out of
 * service because a background job failed once. So:
 *
 * - a job that failed (its own error: a retention statement cancelled, Slack
 *   refusing a digest) is `failing`: shown in /readyz's body, in the metrics
 *   and in the log, and the replica stays ready;
 * - a job whose last `HOUSEKEEPING_DB_FAILURES_UNREADY` firings in a row all
 *   failed because the database did (connection refused, lost, timed out) is
 *   `database failing`, and holds the replica not ready until the database
 *   is shown usable again: every loop has finished a tick after that last
 *   failure (the loops' own rule after an outage), or the job succeeds.
 */
export const HOUSEKEEPING_DB_FAILURES_UNREADY = 3;

export interface HousekeepingRecord {
  /** Firings in a row that failed (0 once one succeeds). */
  failures: number;
  /** Of those, the ones that were the database failing. */
  dbErrors: number;
  lastErrorAt?: Date;
}

export type HousekeepingState = 'ok' | 'failing' | 'database failing';

export interface HousekeepingHealth {
  state: HousekeepingState;
  /** True when the job holds its replica not ready. */
  blocksReadiness: boolean;
}

/**
 * `loopsLastTickAt`: when each of the replica's loops last finished a tick
 * without an error (undefined: never yet).
 */
export function housekeepingHealth(job: HousekeepingRecord, loopsLastTickAt: (Date | undefined)[]): HousekeepingHealth {
  if (job.failures === 0) return { state: 'ok', blocksReadiness: false };
  const databaseEveryTime = job.failures >= HOUSEKEEPING_DB_FAILURES_UNREADY && job.dbErrors === job.failures;
  if (!databaseEveryTime) return { state: 'failing', blocksReadiness: false };
  const failedAt = job.lastErrorAt?.getTime() ?? -Infinity;
  const databaseBack = loopsLastTickAt.length > 0 && loopsLastTickAt.every((at) => at !== undefined && at.getTime() > failedAt);
  return { state: 'database failing', blocksReadiness: !databaseBack };
}

/**
 * How many attempts one digest fire time gets when an attempt fails before
 * anything was sent (its facts could not be read, Slack answered with a
 * transient error or a rate limit): tried again the next minute while within
 * this many attempts (and the fire time's catch-up window), then given up
 * with the error kept in its firing row. An attempt whose post may have
 * reached Slack is never retried: one digest per fire time, at most.
 */
export const DIGEST_ATTEMPTS = 5;

/** After the `attempts`th attempt at a fire time failed with nothing sent: try it again, or give it up? */
export function retryFailedFiring(attempts: number, max = DIGEST_ATTEMPTS): boolean {
  return attempts < max;
}

/**
 * A digest attempt that has neither finished, failed nor begun to post this
 * long after its claim (its replica stalled or died, or could not even record
 * its failure with the database away) is taken over by the next replica to
 * look, as a failed attempt would be: nothing of it was sent. The stalled
 * replica, should it wake, finds its claim taken and posts nothing (it marks
 * the row as posting only while it still holds the claim).
 */
export const DIGEST_STALE_MS = 5 * 60_000;
