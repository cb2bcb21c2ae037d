import type { DeliveryResult } from '../transport.js';
import { classifyFetchError, classifyHttpResponse } from './http-outcome.js';

/**
 * One JSON POST to a receiver, answered in the sender's terms: `ok` with the
 * status for a 2xx, otherwise the classified failure (http-outcome.ts).
 * Redirects are not followed: a signed body must not be replayed to another
 * host. The timeout makes a hung receiver an `unknown` outcome, never a
 * stuck pipeline.
 */
export async function postJson(
  url: string,
  body: string,
  options: { headers?: Record<string, string>; timeoutMs: number; now: Date },
): Promise<DeliveryResult | { kind: 'ok'; status: number }> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      headers: { ...options.headers, 'Content-Type': 'application/json', 'User-Agent': 'scheduler-bot' },
      body,
      signal: AbortSignal.timeout(options.timeoutMs),
    });
  } catch (error) {
    return classifyFetchError(error);
  }
  const text = await response.text().catch(() => '');
  const outcome = classifyHttpResponse(response.status, response.headers.get('retry-after'), options.now, text);
  return outcome.kind === 'ok' ? { kind: 'ok', status: response.status } : outcome;
}
