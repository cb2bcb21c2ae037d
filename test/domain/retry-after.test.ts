import { describe, expect, it } from 'vitest';
import { retryAfterMs } from '../../src/domain/retry-after.js';

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
