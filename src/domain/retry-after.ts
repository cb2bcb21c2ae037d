import { DEFAULT_OUTAGE_POLICY } from './destination-outage.js';

/** A 429 without a usable Retry-After: wait this long. */
export const DEFAULT_RETRY_AFTER_MS = 30_000;

/**
 * The longest a 429 is obeyed: the destination-outage back-off cap (10
 * minutes), for the same reason. A receiver's Retry-After holds its whole
 * pacing key (every webhook to its host, every event for a routing key, a
 * Slack channel), so `Retry-After: 99999999` would silence them for years;
 * a destination the bot cannot deliver to is asked again at least every 10
 * minutes, whatever it said. One request per 10 minutes costs a
 * rate-limiting receiver nothing, and an alert held up longer than that is
 * no longer an alert. A receiver still rate-limiting answers 429 again.
 */
export const MAX_RETRY_AFTER_MS = DEFAULT_OUTAGE_POLICY.maxBackoffMs;

/** A wait a receiver asked for, within [0, MAX_RETRY_AFTER_MS]. */
export function capRetryAfterMs(ms: number): number {
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms));
}

/**
 * How long a `Retry-After` header asks to wait: delta-seconds (a fraction
 * rounded up to the next whole second) or an HTTP date, measured from `now`
 * (a date already past: no wait), never longer than MAX_RETRY_AFTER_MS.
 * Anything else (absent, negative, text) waits the default. A date is only
 * read as one when it names a month or a weekday: `Date.parse` also takes
 * "1.5" or "-1" for dates in 2001, which would mean no wait at all.
 */
export function retryAfterMs(header: string | null, now: Date): number {
  if (!header) return DEFAULT_RETRY_AFTER_MS;
  const trimmed = header.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return capRetryAfterMs(Math.ceil(Number(trimmed)) * 1000);
  if (!/[A-Za-z]{3}/.test(trimmed)) return DEFAULT_RETRY_AFTER_MS;
  const date = Date.parse(trimmed);
  if (!Number.isNaN(date)) return capRetryAfterMs(date - now.getTime());
  return DEFAULT_RETRY_AFTER_MS;
}
