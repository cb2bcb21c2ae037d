import { withOwnHeaders } from '../../domain/webhook-headers.js';
import { redactSecrets } from '../../secrets.js';
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
  /** `tenantId`: whose alert this is, the scope its secrets are redacted in (src/secrets.ts). */
  /** `signal`: cuts the request off early (the row's lease is about to end, see `DeliveryInput.keepLease`). */
  options: { headers?: Record<string, string>; timeoutMs: number; now: Date; tenantId: string; signal?: AbortSignal },
): Promise<DeliveryResult | { kind: 'ok'; status: number }> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      headers: withOwnHeaders(options.headers, { 'Content-Type': 'application/json', 'User-Agent': 'scheduler-bot' }),
      body,
      signal: options.signal ? AbortSignal.any([AbortSignal.timeout(options.timeoutMs), options.signal]) : AbortSignal.timeout(options.timeoutMs),
    });
  } catch (error) {
    return classifyFetchError(error);
  }
  // Of a refusal only its start is kept (as the error); of an acceptance nothing. Never read to its end:
  // a receiver's answer can be as long, or as slow, as it likes.
  const ok = response.status >= 200 && response.status < 300;
  // Redacted whole, before the error keeps its start: a secret where that start ends is not kept in part.
  const text = ok ? '' : redactSecrets(await readStart(response, MAX_ANSWER_BYTES), options.tenantId);
  if (ok) await response.body?.cancel().catch(() => {});
  const outcome = classifyHttpResponse(response.status, response.headers.get('retry-after'), options.now, text);
  return outcome.kind === 'ok' ? { kind: 'ok', status: response.status } : outcome;
}

/** How much of a refusal's body is read (the stored error keeps less). */
const MAX_ANSWER_BYTES = 4096;

/** The first `max` bytes of a body as text; the rest is not waited for. */
async function readStart(response: Response, max: number): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < max) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // Cut off mid-answer: what arrived is the answer.
  } finally {
    await reader.cancel().catch(() => {});
  }
  return new TextDecoder().decode(Buffer.concat(chunks).subarray(0, max));
}
