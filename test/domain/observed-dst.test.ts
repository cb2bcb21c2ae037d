import { describe, expect, it } from 'vitest';
import { profileFor } from '../../src/domain/cadence.js';
import { observedTickWindow, repeatedFirstPassBefore, startsInWindow, windowClosesAt } from '../../src/domain/observed-dst.js';
import { fireTimesBetween } from '../../src/domain/schedule.js';
import { tickCandidates } from '../../src/domain/tick-match.js';

/**
 * An observed tick on a DST night (src/domain/observed-dst.ts): the ticks
 * within three hours of each transition whose window is not just the tick,
 * as `HH:MM UTC` with the spans its run may start in and whether it may not
 * run at all. Every other tick must run at its time.
 */

type Odd = string[];
const describeOdd = (cron: string, tz: string, change: string): Odd => {
  const c = Date.parse(change);
  return fireTimesBetween(cron, tz, new Date(c - 3 * 3_600_000), new Date(c + 3 * 3_600_000)).flatMap((tick) => {
    const w = observedTickWindow(cron, tz, tick);
    const hhmm = (d: Date) => d.toISOString().slice(11, 16);
    const plain = w.mayNotRun === null && w.spans.length === 1 && w.spans[0]!.from.getTime() === tick.getTime();
    if (plain) return [];
    const spans = w.spans.map((s) => (s.from.getTime() === s.to.getTime() ? hhmm(s.from) : `${hhmm(s.from)}-${hhmm(s.to)}`)).join(',');
    return [`${hhmm(tick)} [${spans}]${w.mayNotRun ? ' may not run' : ''}`];
  });
};

const NIGHTS: { name: string; tz: string; change: string; daily: string; expected: Record<string, Odd> }[] = [
  {
    name: 'Berlin spring-forward (02:00 → 03:00 at 01:00 UTC)',
    tz: 'Europe/Berlin',
    change: '2026-03-29T01:00:00Z',
    daily: '30 2 * * *',
    // The daily tick the gap moved to 03:30 CEST may run from the change (cron) or not at all (Kubernetes); `0 */2`'s 02:00 likewise.
    expected: { daily: ['01:30 [01:00-01:30] may not run'], hourly: [], quarter: [], twoHourly: ['01:00 [01:00] may not run'] },
  },
  {
    name: 'Berlin fall-back (03:00 → 02:00 at 01:00 UTC)',
    tz: 'Europe/Berlin',
    change: '2026-10-25T01:00:00Z',
    daily: '30 2 * * *',
    // Fired once, at the first pass: its run may come at either. Every-hour jobs' second passes may not run.
    expected: {
      daily: ['00:30 [00:30,01:30]'],
      hourly: ['01:00 [01:00] may not run'],
      quarter: ['01:00 [01:00] may not run', '01:15 [01:15] may not run', '01:30 [01:30] may not run', '01:45 [01:45] may not run'],
      twoHourly: ['00:00 [00:00,01:00]'],
    },
  },
  {
    name: 'New York spring-forward (02:00 → 03:00 at 07:00 UTC)',
    tz: 'America/New_York',
    change: '2026-03-08T07:00:00Z',
    daily: '30 2 * * *',
    expected: { daily: ['07:30 [07:00-07:30] may not run'], hourly: [], quarter: [], twoHourly: ['07:00 [07:00] may not run'] },
  },
  {
    name: 'New York fall-back (02:00 → 01:00 at 06:00 UTC)',
    tz: 'America/New_York',
    change: '2026-11-01T06:00:00Z',
    daily: '30 1 * * *',
    expected: {
      daily: ['05:30 [05:30,06:30]'],
      hourly: ['06:00 [06:00] may not run'],
      quarter: ['06:00 [06:00] may not run', '06:15 [06:15] may not run', '06:30 [06:30] may not run', '06:45 [06:45] may not run'],
      // 00:00 and 02:00 are not repeated in New York: nothing to say.
      twoHourly: [],
    },
  },
  {
    name: 'Sydney spring-forward, in October (02:00 → 03:00 at 16:00 UTC)',
    tz: 'Australia/Sydney',
    change: '2026-10-03T16:00:00Z',
    daily: '30 2 * * *',
    expected: { daily: ['16:30 [16:00-16:30] may not run'], hourly: [], quarter: [], twoHourly: ['16:00 [16:00] may not run'] },
  },
  {
    name: 'Sydney fall-back, in April (03:00 → 02:00 at 16:00 UTC)',
    tz: 'Australia/Sydney',
    change: '2026-04-04T16:00:00Z',
    daily: '30 2 * * *',
    expected: {
      daily: ['15:30 [15:30,16:30]'],
      hourly: ['16:00 [16:00] may not run'],
      quarter: ['16:00 [16:00] may not run', '16:15 [16:15] may not run', '16:30 [16:30] may not run', '16:45 [16:45] may not run'],
      twoHourly: ['15:00 [15:00,16:00]'],
    },
  },
  {
    name: 'Lord Howe spring-forward, half an hour (02:00 → 02:30 at 15:30 UTC)',
    tz: 'Australia/Lord_Howe',
    change: '2026-10-03T15:30:00Z',
    daily: '15 2 * * *',
    // 02:00 is skipped and 02:30 is no `0 * * * *` time: the hourly job's moved tick is a tick of its own, which cron never runs.
    expected: { daily: ['15:45 [15:30-15:45] may not run'], hourly: ['15:30 [15:30] may not run'], quarter: [], twoHourly: ['15:30 [15:30] may not run'] },
  },
  {
    name: 'Lord Howe fall-back, half an hour (02:00 → 01:30 at 15:00 UTC)',
    tz: 'Australia/Lord_Howe',
    change: '2026-04-04T15:00:00Z',
    daily: '45 1 * * *',
    expected: { daily: ['14:45 [14:45,15:15]'], hourly: [], quarter: ['15:00 [15:00] may not run', '15:15 [15:15] may not run'], twoHourly: [] },
  },
  {
    name: 'Santiago spring-forward at midnight (00:00 → 01:00 at 04:00 UTC: 00:00 does not exist)',
    tz: 'America/Santiago',
    change: '2026-09-06T04:00:00Z',
    daily: '0 0 * * *',
    expected: { daily: ['04:00 [04:00] may not run'], hourly: [], quarter: [], twoHourly: ['04:00 [04:00] may not run'] },
  },
  {
    name: 'Santiago fall-back at midnight (00:00 → 23:00 at 03:00 UTC)',
    tz: 'America/Santiago',
    change: '2026-04-05T03:00:00Z',
    daily: '30 23 * * *',
    expected: {
      daily: ['02:30 [02:30,03:30]'],
      hourly: ['03:00 [03:00] may not run'],
      quarter: ['03:00 [03:00] may not run', '03:15 [03:15] may not run', '03:30 [03:30] may not run', '03:45 [03:45] may not run'],
      twoHourly: [],
    },
  },
  {
    name: 'Tokyo, no DST: nothing is ever optional',
    tz: 'Asia/Tokyo',
    change: '2026-03-28T17:00:00Z',
    daily: '0 2 * * *',
    expected: { daily: [], hourly: [], quarter: [], twoHourly: [] },
  },
];

describe('observedTickWindow: what an observed tick asks of the outside scheduler on a DST night', () => {
  for (const night of NIGHTS) {
    it(night.name, () => {
      const crons = { daily: night.daily, hourly: '0 * * * *', quarter: '*/15 * * * *', twoHourly: '0 */2 * * *' };
      const got = Object.fromEntries(Object.entries(crons).map(([k, cron]) => [k, describeOdd(cron, night.tz, night.change)]));
      expect(got).toEqual(night.expected);
    });
  }

  it('says why, in words an operator reads on the skipped row', () => {
    expect(observedTickWindow('30 2 * * *', 'Europe/Berlin', new Date('2026-03-29T01:30:00Z')).mayNotRun).toBe(
      'DST: 02:30 did not exist in Europe/Berlin (02:00 → 03:00); a scheduler may skip such a time (a Kubernetes CronJob does), so no run is not a failure',
    );
    expect(observedTickWindow('0 * * * *', 'America/New_York', new Date('2026-11-01T06:00:00Z')).mayNotRun).toBe(
      'DST: 01:00 came twice in America/New_York (02:00 → 01:00); a scheduler may run it once, so no second run is not a failure',
    );
    expect(observedTickWindow('15 2 * * *', 'Australia/Lord_Howe', new Date('2026-10-03T15:45:00Z')).mayNotRun).toContain('(02:00 → 02:30)');
  });

  it('the day before and the day after a transition, the daily tick must run at its time', () => {
    for (const tick of ['2026-03-28T01:30:00Z', '2026-03-30T00:30:00Z']) {
      expect(observedTickWindow('30 2 * * *', 'Europe/Berlin', new Date(tick))).toEqual({ spans: [{ from: new Date(tick), to: new Date(tick) }], mayNotRun: null });
    }
  });

  it('startsInWindow and windowClosesAt: the early allowance before each span, the grace after the last', () => {
    const w = observedTickWindow('30 1 * * *', 'America/New_York', new Date('2026-11-01T05:30:00Z'));
    const at = (iso: string) => startsInWindow(w, new Date(iso), 60_000, 1_800_000);
    expect([at('2026-11-01T05:29:00Z'), at('2026-11-01T05:28:59Z'), at('2026-11-01T06:00:00Z'), at('2026-11-01T06:00:01Z')]).toEqual([true, false, true, false]);
    expect([at('2026-11-01T06:29:00Z'), at('2026-11-01T07:00:00Z'), at('2026-11-01T07:00:01Z')]).toEqual([true, true, false]);
    expect(windowClosesAt(w, 1_800_000).toISOString()).toBe('2026-11-01T07:00:00.000Z');
  });

  it('repeatedFirstPassBefore: the first pass of the latest repeated wall time at or before, for a job firing it once', () => {
    const first = (cron: string, tz: string, at: string) => repeatedFirstPassBefore(cron, tz, new Date(at))?.toISOString();
    expect(first('30 1 * * *', 'America/New_York', '2026-11-01T06:35:00Z')).toBe('2026-11-01T05:30:00.000Z');
    // 01:20 EST is after 01:15's second pass, not 01:45's.
    expect(first('*/15 1 * * *', 'America/New_York', '2026-11-01T06:20:00Z')).toBe('2026-11-01T05:15:00.000Z');
    // Before the second pass; an every-hour job (its second pass is a tick of its own); no DST near.
    expect(first('30 1 * * *', 'America/New_York', '2026-11-01T06:25:00Z')).toBeUndefined();
    expect(first('30 * * * *', 'America/New_York', '2026-11-01T06:35:00Z')).toBeUndefined();
    expect(first('30 1 * * *', 'America/New_York', '2026-11-20T06:35:00Z')).toBeUndefined();
  });
});

describe('cadence on these nights', () => {
  it('the profile (cadence, grace, patience, escalation multiplier) read on a DST night is the one read a month before', () => {
    const pick = (p: ReturnType<typeof profileFor>) => [p.cadenceSeconds, p.graceSeconds, p.alertAfter, p.retries, p.firstSeverity, p.escalationMultiplier];
    for (const night of NIGHTS) {
      for (const cron of [night.daily, '0 * * * *', '*/15 * * * *', '0 */2 * * *']) {
        const change = Date.parse(night.change);
        expect(pick(profileFor(cron, night.tz, {}, new Date(change - 3_600_000))), `${night.tz} ${cron}`).toEqual(pick(profileFor(cron, night.tz, {}, new Date(change - 30 * 86_400_000))));
      }
    }
  });
});

describe('tickCandidates on DST nights (the same windows)', () => {
  const candidates = (cron: string, tz: string, start: string, mode: 'observed' | 'managed' = 'observed') =>
    tickCandidates({ cron, timezone: tz, mode }, new Date(start), profileFor(cron, tz, {}, new Date(start))).map((d) => d.toISOString());

  it('a fixed-time job run at the second pass of a repeated hour is its tick\'s run (a scheduler that picked the later 01:30)', () => {
    // New York, 1 November 2026: 01:30 EDT is 05:30 UTC, 01:30 EST 06:30 UTC.
    expect(candidates('30 1 * * *', 'America/New_York', '2026-11-01T06:30:05Z')).toEqual(['2026-11-01T05:30:00.000Z']);
    expect(candidates('30 1 * * *', 'America/New_York', '2026-11-01T06:29:30Z')).toEqual(['2026-11-01T05:30:00.000Z']);
    // Santiago: 23:30 came twice (02:30 and 03:30 UTC on 5 April).
    expect(candidates('30 23 * * *', 'America/Santiago', '2026-04-05T03:31:00Z')).toEqual(['2026-04-05T02:30:00.000Z']);
    // Half an hour apart in Lord Howe: 01:45 LHDT (14:45 UTC) and 01:45 LHST (15:15 UTC).
    expect(candidates('45 1 * * *', 'Australia/Lord_Howe', '2026-04-04T15:16:00Z')).toEqual(['2026-04-04T14:45:00.000Z']);
    // A managed workflow's tick is the scheduler's, fired once: a report at the second pass is nobody's tick.
    expect(candidates('30 1 * * *', 'America/New_York', '2026-11-01T06:30:05Z', 'managed')).toEqual([]);
  });

  it('`*/15 1 * * *` at 01:20 EST is 01:15\'s second pass, not 01:45\'s', () => {
    expect(candidates('*/15 1 * * *', 'America/New_York', '2026-11-01T06:15:30Z')).toEqual(['2026-11-01T05:15:00.000Z']);
  });

  it('an hourly job\'s second pass is a tick of its own', () => {
    expect(candidates('0 * * * *', 'Europe/Berlin', '2026-10-25T01:00:10Z')).toEqual(['2026-10-25T01:00:00.000Z']);
  });

  it('`0 */2 * * *` in Berlin\'s gap: a run at 03:00 CEST is the moved tick\'s', () => {
    expect(candidates('0 */2 * * *', 'Europe/Berlin', '2026-03-29T01:00:10Z')).toEqual(['2026-03-29T01:00:00.000Z']);
  });

  it('Santiago\'s missing midnight: a run when the clocks change (01:00 -03) is the moved tick\'s', () => {
    expect(candidates('0 0 * * *', 'America/Santiago', '2026-09-06T04:00:30Z')).toEqual(['2026-09-06T04:00:00.000Z']);
  });
});
