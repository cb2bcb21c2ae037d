import { createHmac } from 'node:crypto';
import { systemClock } from '../../src/clock.js';

/** Slack's request signature: `v0=` HMAC-SHA256 of `v0:{timestamp}:{raw body}`. */
export function signSlackRequest(secret: string, body: string, contentType = 'application/x-www-form-urlencoded'): Record<string, string> {
  const ts = Math.floor(systemClock.now().getTime() / 1000);
  const signature = `v0=${createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex')}`;
  return { 'content-type': contentType, 'x-slack-request-timestamp': String(ts), 'x-slack-signature': signature };
}
