import { describe, expect, it } from 'vitest';
import { profileFor } from '../../src/domain/cadence.js';
import { gapEndBefore } from '../../src/domain/schedule.js';
import { earlyStartMs, graceToCoverSeconds, isFutureTick, lateReportOf, lateTickOfEnd, lateStartNote, tickCandidates, utcCrontabNote } from '../../src/domain/tick-match.js';

describe('tickCandidates: which tick a reported start may be the run of', () => {
  const cases: { name: string; cron: string; tz?: string; mode: 'observed' | 'managed'; start: string; expected: string[] }[] = [
    { name: 'on time', cron: '0 9 * * *', mode: 'observed', start: '2026-03-10T09:00:05Z', expected: ['2026-03-10T09:00:00Z'] },
    { name: 'late, within the grace (30 min for a daily job)', cron: '0 9 * * *', mode: 'observed', start: '2026-03-10T09:29:00Z', expected: ['2026-03-10T09:00:00Z'] },
    { name: 'late, past the grace', cron: '0 9 * * *', mode: 'observed', start: '2026-03-10T09:31:00Z', expected: [] },
    { name: 'a second early: the coming tick', cron: '0 9 * * *', mode: 'observed', start: '2026-03-10T08:59:59Z', expected: ['2026-03-10T09:00:00Z'] },
    { name: 'three minutes early (a host whose NTP is broken): the coming tick', cron: '0 9 * * *', mode: 'observed', start: '2026-03-10T08:57:00Z', expected: ['2026-03-10T09:00:00Z'] },
    { name: 'five minutes early is the most a daily job is allowed', cron: '0 9 * * *', mode: 'observed', start: '2026-03-10T08:55:00Z', expected: ['2026-03-10T09:00:00Z'] },
    { name: 'six minutes early: no tick', cron: '0 9 * * *', mode: 'observed', start: '2026-03-10T08:54:00Z', expected: [] },
    // Hourly: a tenth of the cadence is six minutes, five the most; grace six minutes. 08:56 is the 09:00 tick's, not a late 08:00.
    { name: 'an hourly job four minutes early: the coming tick', cron: '0 * * * *', mode: 'observed', start: '2026-03-10T08:56:00Z', expected: ['2026-03-10T09:00:00Z'] },
    // Five-minute: 30 s early at most; three minutes early is two minutes late for the tick before (past its 60 s grace).
    { name: 'a five-minute job three minutes early: no tick', cron: '*/5 * * * *', mode: 'observed', start: '2026-03-10T08:57:00Z', expected: [] },
    { name: 'a managed workflow\'s coming tick is never taken', cron: '0 9 * * *', mode: 'managed', start: '2026-03-10T08:59:59Z', expected: [] },
    // A minute job: grace 60 s, early allowance 6 s. Late for one tick and early for the next: the late one first.
    { name: 'every minute: late for one tick, early for the next', cron: '* * * * *', mode: 'observed', start: '2026-03-10T09:00:57Z', expected: ['2026-03-10T09:00:00Z', '2026-03-10T09:01:00Z'] },
    { name: 'every minute: 10 s early is not early enough', cron: '* * * * *', mode: 'observed', start: '2026-03-10T09:00:50Z', expected: ['2026-03-10T09:00:00Z'] },
    // New York spring forward (8 March 2026): 02:30 does not exist and fires at 03:30 EDT (07:30 UTC).
    { name: 'early for a tick the DST gap moved', cron: '30 2 * * *', tz: 'America/New_York', mode: 'observed', start: '2026-03-08T07:29:30Z', expected: ['2026-03-08T07:30:00Z'] },
    // A tick the gap moved may be run from the moment the clocks change (cron runs a skipped job then): 03:00 CEST, not 03:30.
    { name: 'Berlin spring-forward: 02:30 run at 03:00 CEST is the 03:30 CEST tick', cron: '30 2 * * *', tz: 'Europe/Berlin', mode: 'observed', start: '2026-03-29T01:00:04Z', expected: ['2026-03-29T01:30:00Z'] },
    { name: 'Berlin spring-forward: ten minutes before the change is too early', cron: '30 2 * * *', tz: 'Europe/Berlin', mode: 'observed', start: '2026-03-29T00:50:00Z', expected: [] },
    { name: 'Berlin spring-forward: a 03:15 job is not moved, so 03:00 is too early for it', cron: '15 3 * * *', tz: 'Europe/Berlin', mode: 'observed', start: '2026-03-29T01:00:04Z', expected: [] },
    { name: 'Lord Howe spring-forward (30 minutes): 02:15 run at the change is the 02:45 LHDT tick', cron: '15 2 * * *', tz: 'Australia/Lord_Howe', mode: 'observed', start: '2026-10-03T15:30:10Z', expected: ['2026-10-03T15:45:00Z'] },
    { name: 'a managed workflow\'s moved tick is the scheduler\'s too', cron: '30 2 * * *', tz: 'Europe/Berlin', mode: 'managed', start: '2026-03-29T01:00:04Z', expected: [] },
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

  it('the early allowance is a tenth of the cadence, at most five minutes', () => {
    expect([60, 300, 600, 3000, 3600, 86_400].map(earlyStartMs)).toEqual([6_000, 30_000, 60_000, 300_000, 300_000, 300_000]);
  });

  it('isFutureTick: an observed workflow\'s tick named within the early allowance has come; a managed one\'s never early', () => {
    const tick = new Date('2026-03-10T09:00:00Z');
    const before = (ms: number) => new Date(tick.getTime() - ms);
    expect(isFutureTick(tick, before(0), { mode: 'observed' }, 86_400)).toBe(false);
    expect(isFutureTick(tick, before(300_000), { mode: 'observed' }, 86_400)).toBe(false);
    expect(isFutureTick(tick, before(300_001), { mode: 'observed' }, 86_400)).toBe(true);
    expect(isFutureTick(tick, before(6_001), { mode: 'observed' }, 60)).toBe(true);
    expect(isFutureTick(tick, before(1), { mode: 'managed' }, 86_400)).toBe(true);
  });

  it('gapEndBefore: the instant the clocks changed, for a fire time a spring-forward gap moved, and only for one', () => {
    const end = (cron: string, tz: string, tick: string) => gapEndBefore(cron, tz, new Date(tick))?.toISOString();
    expect(end('30 2 * * *', 'Europe/Berlin', '2026-03-29T01:30:00Z')).toBe('2026-03-29T01:00:00.000Z');
    expect(end('30 2 * * *', 'America/New_York', '2026-03-08T07:30:00Z')).toBe('2026-03-08T07:00:00.000Z');
    expect(end('15 2 * * *', 'Australia/Lord_Howe', '2026-10-03T15:45:00Z')).toBe('2026-10-03T15:30:00.000Z');
    // Chatham jumps at 02:45 CHAST: a 02:45 job fires at the change itself.
    expect(end('45 2 * * *', 'Pacific/Chatham', '2026-09-26T14:00:00Z')).toBe('2026-09-26T14:00:00.000Z');
    // Fire times at their own wall time: the day before, a time after the gap, a fall-back night, a fixed zone.
    expect(end('30 2 * * *', 'Europe/Berlin', '2026-03-28T01:30:00Z')).toBeUndefined();
    expect(end('30 3 * * *', 'Europe/Berlin', '2026-03-29T01:30:00Z')).toBeUndefined();
    expect(end('30 2,3 * * *', 'Europe/Berlin', '2026-03-29T01:30:00Z')).toBeUndefined();
    expect(end('30 2 * * *', 'Europe/Berlin', '2026-10-25T00:30:00Z')).toBeUndefined();
    expect(end('30 2 * * *', 'Asia/Kathmandu', '2026-03-28T20:45:00Z')).toBeUndefined();
  });
});

describe('lateTickOfEnd, lateReportOf, graceToCoverSeconds: an end reported after its tick\'s grace', () => {
  const profile = { graceSeconds: 1800, timeoutSeconds: 6 * 3600 };
  it.each([
    ['past the grace: the latest tick', '0 2 * * *', 'observed', '2026-03-10T03:10:00Z', '2026-03-10T02:00:00.000Z'],
    ['within the grace: none (the usual candidates take it)', '0 2 * * *', 'observed', '2026-03-10T02:20:00Z', null],
    ['a managed workflow\'s ticks are the scheduler\'s: none', '0 2 * * *', 'managed', '2026-03-10T03:10:00Z', null],
    ['hours later, within the timeout: that tick', '0 2 * * *', 'observed', '2026-03-10T07:30:00Z', '2026-03-10T02:00:00.000Z'],
    ['past the timeout (a run started then would have timed out): none, a run outside any tick', '0 2 * * *', 'observed', '2026-03-10T08:01:00Z', null],
    ['a job whose clock runs ahead, ending just before the next tick: not the last tick\'s', '0 9 * * *', 'observed', '2026-03-10T08:58:00Z', null],
  ] as const)('%s', (_name, cron, mode, start, expected) => {
    expect(lateTickOfEnd({ cron, timezone: 'UTC', mode }, new Date(start), profile)?.toISOString() ?? null).toBe(expected);
  });

  it('says how late the report was and a grace that covers it, only for a run that started past its grace', () => {
    const tick = new Date('2026-03-10T02:00:00Z');
    const end = new Date('2026-03-10T03:10:00Z');
    expect(lateReportOf({ tick, startedAt: end, finishedAt: end }, 1800)).toEqual({ afterGraceSeconds: 2400, graceToCoverSeconds: 5100 });
    expect(lateReportOf({ tick, startedAt: new Date('2026-03-10T02:01:00Z'), finishedAt: end }, 1800)).toBeNull();
    expect(lateReportOf({ tick: null, startedAt: end, finishedAt: end }, 1800)).toBeNull();
  });

  it.each([
    [90_000, 120], // 90 s × 1.2 = 108 s → 2 minutes
    [40 * 60_000, 3000], // 48 min, rounded up to 5 minutes: 50 min
    [3 * 3600_000, 13_500], // 3.6 h → 3 h 45 min
  ])('graceToCoverSeconds(%d ms) = %d s', (ms, expected) => {
    expect(graceToCoverSeconds(ms)).toBe(expected);
  });
});

describe('utcCrontabNote: a run outside every tick whose start is on time for the same cron in UTC', () => {
  const note = (cron: string, timezone: string, start: string, mode = 'observed') => {
    const at = new Date(start);
    return utcCrontabNote({ cron, timezone, mode }, at, profileFor(cron, timezone, {}, at));
  };
  it('names the UTC fire time and the fix, in winter and in summer', () => {
    expect(note('0 2 * * *', 'Europe/Berlin', '2026-03-10T02:00:10Z')).toBe(
      'started on time for 02:00 UTC, a fire time of "0 2 * * *" in UTC but not in Europe/Berlin, so it is outside every tick: if the job\'s crontab runs in UTC, put CRON_TZ=Europe/Berlin above it (or declare timezone UTC)',
    );
    expect(note('30 2 * * *', 'America/New_York', '2026-07-10T02:31:00Z')).toMatch(/^started on time for 02:30 UTC/);
  });
  it('says nothing for a start no UTC fire time explains, a zone whose fire times are UTC\'s, a UTC workflow, or a managed one', () => {
    expect(note('0 2 * * *', 'Europe/Berlin', '2026-03-10T05:00:00Z')).toBeNull();
    // London in winter is UTC: the same instants (a start there outside every tick is a rerun, not a zone).
    expect(note('0 2 * * *', 'Europe/London', '2026-01-10T02:00:10Z')).toBeNull();
    expect(note('0 2 * * *', 'UTC', '2026-03-10T02:00:10Z')).toBeNull();
    expect(note('0 2 * * *', 'Europe/Berlin', '2026-03-10T02:00:10Z', 'managed')).toBeNull();
  });
});

describe('lateStartNote', () => {
  it('names the tick in its own zone, how late the start came, the grace, and one that would have covered it', () => {
    // 02:00 Berlin (CET) is 01:00 UTC; started 1 h 10 min later; a fifth more is 84 min, rounded up to 85.
    expect(lateStartNote(new Date('2026-03-10T01:00:00Z'), new Date('2026-03-10T02:10:00Z'), 1800, 'Europe/Berlin')).toBe(
      'started 1 hour 10 minutes after its 02:00 Europe/Berlin tick, past the tick\'s grace (30 minutes), so the tick was recorded missed: if this is that tick\'s run, consider graceSeconds: 5100 or more',
    );
  });
});

