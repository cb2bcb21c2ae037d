import { describe, expect, it } from 'vitest';
import { policySchema } from '../../src/config/workflows-file.js';
import { MAX_ALERT_AFTER, profileFor } from '../../src/domain/cadence.js';
import { DURATION_SAMPLES_KEPT, STREAK_FAILURES_KEPT } from '../../src/domain/retention.js';
import { MIN_SAMPLES, NORMAL_SAMPLES } from '../../src/domain/run-duration.js';

describe('what retention keeps for decisions (src/domain/retention.ts)', () => {
  it('a streak keeps comfortably more failures than any alertAfter (and failures-to-escalate) a policy can set', () => {
    expect(policySchema.safeParse({ alertAfter: MAX_ALERT_AFTER }).success).toBe(true);
    expect(policySchema.safeParse({ alertAfter: MAX_ALERT_AFTER + 1 }).success).toBe(false);
    const strictest = profileFor('* * * * *', 'UTC', { alertAfter: MAX_ALERT_AFTER }, new Date('2026-03-02T00:00:00Z'));
    expect(STREAK_FAILURES_KEPT).toBeGreaterThanOrEqual(strictest.escalateAfterFailures);
    expect(STREAK_FAILURES_KEPT).toBeGreaterThan(MAX_ALERT_AFTER);
  });

  it('every sample the normal duration is learned from is kept, not just the minimum', () => {
    expect(DURATION_SAMPLES_KEPT).toBe(NORMAL_SAMPLES);
    expect(DURATION_SAMPLES_KEPT).toBeGreaterThanOrEqual(MIN_SAMPLES);
  });
});
