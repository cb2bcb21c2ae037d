import { describe, expect, it } from 'vitest';
import { profileFor } from '../../src/domain/cadence.js';
import { earlyStartMs, tickCandidates } from '../../src/domain/tick-match.js';

describe('tickCandidates: which tick a reported start may be the run of', () => {
  const cases: { name: string; cron: string; tz?: string; mode: 'observed' | 'managed'; start: string; expected: string[] }[] = [
    { name: 'on time', cron: '0 9 * * *', mode: 'observed', start: '2026-03-10T09:00:05Z', expected: ['2026-03-10T09:00:00Z'] },
    { name: 'late, within the grace (30 min for a daily job)', cron: '0 9 * * *', mode: 'observed', start: '2026-03-10T09:29:00Z', expected: ['2026-03-10T09:00:00Z'] },
    { name: 'late, past the grace', cron: '0 9 * * *', mode: 'observed', start: '2026-03-10T09:31:00Z', expected: [] },
    { name: 'a second early: the coming tick', cron: '0 9 * * *', mode: 'observed', start: '2026-03-10T08:59:59Z', expected: ['2026-03-10T09:00:00Z'] },
    { name: 'a minute early is the most a daily job is allowed', cron: '0 9 * * *', mode: 'observed', start: '2026-03-10T08:59:00Z', expected: ['2026-03-10T09:00:00Z'] },
    { name: 'two minutes early: no tick', cron: '0 9 * * *', mode: 'observed', start: '2026-03-10T08:58:00Z', expected: [] },
    { name: 'a managed workflow\'s coming tick is never taken', cron: '0 9 * * *', mode: 'managed', start: '2026-03-10T08:59:59Z', expected: [] },
    // A minute job: grace 60 s, early allowance 6 s. Late for one tick and early for the next: the late one first.
    { name: 'every minute: late for one tick, early for the next', cron: '* * * * *', mode: 'observed', start: '2026-03-10T09:00:57Z', expected: ['2026-03-10T09:00:00Z', '2026-03-10T09:01:00Z'] },
    { name: 'every minute: 10 s early is not early enough', cron: '* * * * *', mode: 'observed', start: '2026-03-10T09:00:50Z', expected: ['2026-03-10T09:00:00Z'] },
    // New York spring forward (8 March 2026): 02:30 does not exist and fires at 03:30 EDT (07:30 UTC).
    { name: 'early for a tick the DST gap moved', cron: '30 2 * * *', tz: 'America/New_York', mode: 'observed', start: '2026-03-08T07:29:30Z', expected: ['2026-03-08T07:30:00Z'] },
    // Weekdays only: early on Monday morning, with Friday's tick three days back.
    { name: 'a weekday job early on Monday', cron: '0 9 * * 1-5', mode: 'observed', start: '2026-03-09T08:59:58Z', expected: ['2026-03-09T09:00:00Z'] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const tz = c.tz ?? 'UTC';
      const start = new Date(c.start);
      const profile = profileFor(c.cron, tz, {}, start);
      expect(tickCandidates({ cron: c.cron, timezone: tz, mode: c.mode }, start, profile).map((d) => d.toISOString())).toEqual(c.expected.map((e) => new Date(e).toISOString()));
    });
  }

  it('the early allowance is a tenth of the cadence, at most a minute', () => {
    expect([60, 300, 600, 3600, 86_400].map(earlyStartMs)).toEqual([6_000, 30_000, 60_000, 60_000, 60_000]);
  });
});
