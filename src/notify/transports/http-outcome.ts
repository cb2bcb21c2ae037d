import { retryAfterMs } from '../../domain/retry-after.js';
import type { DeliveryResult } from '../transport.js';

/**
 * An HTTP answer, classified once for the sender: 2xx delivered; 429 waits
 * Retry-After (seconds or an HTTP date); 408 and 5xx are worth another try;
 * 401 and 403 refuse the credentials (the destination is held until they
 * are accepted); any other 4xx will fail the same way every time.
 */
export function classifyHttpResponse(status: number, retryAfter: string | null, now: Date, body: string): DeliveryResult | { kind: 'ok' } {
  if (status >= 200 && status < 300) return { kind: 'ok' };
  const error = `HTTP ${status}${body ? `: ${body.slice(0, 300)}` : ''}`;
  if (status === 429) return { kind: 'rate_limited', retryAfterMs: retryAfterMs(retryAfter, now), error };
  if (status === 408 || status >= 500) return { kind: 'transient', error };
  // The receiver refuses who we are (a webhook's secret rotated on its side, a routing key disabled):
  // the destination's state, not the message's, so every row for it waits (src/domain/destination-outage.ts).
  if (status === 401 || status === 403) return { kind: 'credentials', error };
  if (status >= 400) return { kind: 'permanent', error };
  // 1xx/3xx: redirects are not followed (a signed body must not be replayed elsewhere).
  return { kind: 'permanent', error };
}

/**
 * A request that got no answer. Refused or unresolvable before anything was
 * sent: transient. Reset, closed or timed out once the request may have
 * arrived: unknown (the sender may resend; receivers deduplicate by key).
 */
export function classifyFetchError(error: unknown): DeliveryResult {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const code = cause?.code ?? (error as { code?: string }).code ?? '';
  const message = `${(error as Error).message ?? String(error)}${cause?.message ? ` (${cause.message})` : ''}`;
  if (/ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH/.test(code)) return { kind: 'transient', error: message };
  return { kind: 'unknown', error: message };
}
