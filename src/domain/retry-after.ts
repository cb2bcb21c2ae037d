/** A 429 without a usable Retry-After: wait this long. */
export const DEFAULT_RETRY_AFTER_MS = 30_000;

/**
 * How long a `Retry-After` header asks to wait: delta-seconds (a fraction
 * rounded up to the next whole second) or an HTTP date, measured from `now`
 * (a date already past: no wait). Anything else (absent, negative, text)
 * waits the default. A date is only read as one when it names a month or a
 * weekday: `Date.parse` also takes "1.5" or "-1" for dates in 2001, which
 * would mean no wait at all.
 */
export function retryAfterMs(header: string | null, now: Date): number {
  if (!header) return DEFAULT_RETRY_AFTER_MS;
  const trimmed = header.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.ceil(Number(trimmed)) * 1000;
  if (!/[A-Za-z]{3}/.test(trimmed)) return DEFAULT_RETRY_AFTER_MS;
  const date = Date.parse(trimmed);
  if (!Number.isNaN(date)) return Math.max(0, date - now.getTime());
  return DEFAULT_RETRY_AFTER_MS;
}
