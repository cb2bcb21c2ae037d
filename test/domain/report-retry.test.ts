import { describe, expect, it } from 'vitest';
import { reportRetryDelay } from '../../src/domain/report-retry.js';

describe('reportRetryDelay', () => {
  it('doubles from 250 ms up to 5 s', () => {
    expect([1, 2, 3, 4, 5, 6, 30].map((n) => reportRetryDelay(n, 0, 60_000))).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000]);
  });

  it('keeps trying for the whole window, the last try on its end, then stops', () => {
    expect(reportRetryDelay(12, 58_000, 60_000)).toBe(2000);
    expect(reportRetryDelay(13, 60_000, 60_000)).toBeUndefined();
    expect(reportRetryDelay(13, 75_000, 60_000)).toBeUndefined();
  });
});
