import { describe, expect, it } from 'vitest';
import { MAX_ESCALATION_CADENCE_SECONDS } from '../../src/domain/escalate-at.js';
import { CASES, tellStory } from './story.js';

/** The story of ./story.ts at every cadence, in the two zones whose offsets are not whole hours either side of the date line. */
describe('the failing-workflow story at every cadence', { timeout: 600_000 }, () => {
  for (const tz of ['Asia/Kathmandu', 'Pacific/Chatham']) {
    for (const c of CASES) {
      it(`${c.cron} in ${tz}`, async () => {
        const { alert, x } = await tellStory(c, tz);
        // A schedule that never rests for two cadences: the deadline is exactly opened_at + multiplier × cadence (a day at most).
        if (alert.escalateAt && c.cron !== '*/5 9-17 * * 1-5') {
          expect(alert.escalateAt.getTime() - alert.openedAt.getTime()).toBe(Math.round(x.p.escalationMultiplier * Math.min(x.p.cadenceSeconds, MAX_ESCALATION_CADENCE_SECONDS) * 1000));
        }
      });
    }
  }
});
