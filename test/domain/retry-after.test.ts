import { describe, expect, it } from 'vitest';
import { MAX_RETRY_AFTER_MS, retryAfterMs } from '../../src/domain/retry-after.js';
import { classifySlackError } from '../../src/slack/transport/classify-error.js';
import { webApi } from '@slack/bolt';

const now = new Date('2026-03-10T02:00:00.000Z');

describe('retryAfterMs: how long a 429 asks to wait', () => {
  it.each([
    ['seconds', '7', 7000],
    ['seconds, padded', ' 120 ', 120_000],
    ['zero', '0', 0],
    ['an HTTP date', 'Tue, 10 Mar 2026 02:00:30 GMT', 30_000],
    ['an HTTP date already past', 'Tue, 10 Mar 2026 01:59:00 GMT', 0],
    ['absent', null, 30_000],
    ['not a number nor a date', 'soon', 30_000],
    // Not delta-seconds, and not a date either, though Date.parse reads "1.5" as 5 January 2001 and "-1" as 2001 (both past: no wait at all).
    ['a fraction of seconds, rounded up', '1.5', 2000],
    ['negative', '-1', 30_000],
    ['a bare year-like number is still seconds', '2', 2000],
  ] as const)('%s: %s', (_name, header, expected) => {
    expect(retryAfterMs(header, now)).toBe(expected);
  });
});

describe('a Retry-After longer than the cap waits the cap (10 minutes, the outage back-off cap)', () => {
  it.each([
    ['years of seconds', '99999999'],
    ['just over the cap', '601'],
    ['a date next year', 'Wed, 10 Mar 2027 02:00:00 GMT'],
  ] as const)('%s: %s', (_name, header) => {
    expect(retryAfterMs(header, now)).toBe(MAX_RETRY_AFTER_MS);
  });

  it('the cap is 10 minutes; up to it, the header is obeyed', () => {
    expect(MAX_RETRY_AFTER_MS).toBe(10 * 60_000);
    expect(retryAfterMs('600', now)).toBe(600_000);
  });

  it('Slack’s 429 (its client reads Retry-After as whole seconds) obeys the same cap', () => {
    const rateLimited = (retryAfter: number) => ({ code: webApi.ErrorCode.RateLimitedError, retryAfter });
    expect(classifySlackError(rateLimited(99_999_999), true)).toMatchObject({ kind: 'rate_limited', retryAfterMs: MAX_RETRY_AFTER_MS });
    expect(classifySlackError(rateLimited(3), true)).toMatchObject({ kind: 'rate_limited', retryAfterMs: 3000 });
    expect(classifySlackError(rateLimited(-5), true)).toMatchObject({ kind: 'rate_limited', retryAfterMs: 1000 });
  });
});
