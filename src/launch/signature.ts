import { createHmac } from 'node:crypto';
import { sameSecret } from '../secrets.js';

/**
 * Requests the HTTP launcher sends are signed like Slack signs its own, with a
 * timestamp inside the MAC so a captured request cannot be replayed later:
 *
 *   X-Scheduler-Timestamp: <unix seconds>
 *   X-Scheduler-Signature: v1=<hex HMAC-SHA256(secret, "<timestamp>.<raw body>")>
 *
 * Receivers verify against the raw body bytes, before parsing the JSON.
 */

export const SIGNATURE_HEADER = 'X-Scheduler-Signature';
export const TIMESTAMP_HEADER = 'X-Scheduler-Timestamp';
export const DEFAULT_TOLERANCE_SECONDS = 300;

export function signLaunchRequest(secret: string, timestamp: number, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex')}`;
}

export type SignatureCheck = { ok: true } | { ok: false; reason: 'missing_headers' | 'stale_timestamp' | 'bad_signature' };

export interface SignedRequest {
  body: string;
  timestamp: string | null | undefined;
  signature: string | null | undefined;
}

/**
 * For receivers of launch requests (and the README snippet). `now` is the
 * receiver's clock; timestamps further than `toleranceSeconds` away either way
 * are refused so a recorded request cannot be replayed.
 */
export function verifyLaunchSignature(
  secret: string,
  request: SignedRequest,
  now: Date,
  toleranceSeconds = DEFAULT_TOLERANCE_SECONDS,
): SignatureCheck {
  const { timestamp, signature, body } = request;
  if (!timestamp || !signature) return { ok: false, reason: 'missing_headers' };
  const seconds = Number(timestamp);
  if (!Number.isInteger(seconds) || Math.abs(now.getTime() / 1000 - seconds) > toleranceSeconds) return { ok: false, reason: 'stale_timestamp' };
  return sameSecret(signLaunchRequest(secret, seconds, body), signature) ? { ok: true } : { ok: false, reason: 'bad_signature' };
}

/**
 * A per-run token the far side of a callback launch may present instead of
 * the tenant's API token. Derived, not stored: it is the MAC of the run id
 * under the launcher's secret, so it authorises finishing that one run only
 * and needs no column to keep.
 */
export function callbackTokenFor(secret: string, runId: number): string {
  return `sbr_${runId}_${createHmac('sha256', secret).update(`callback:${runId}`, 'utf8').digest('hex')}`;
}

/** The run id a callback token claims to be for; verify with `callbackTokenFor` before trusting it. */
export function runIdOfCallbackToken(token: string): number | undefined {
  const m = /^sbr_(\d{1,15})_[0-9a-f]{64}$/.exec(token);
  return m ? Number(m[1]) : undefined;
}
