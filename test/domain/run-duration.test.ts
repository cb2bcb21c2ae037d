import { describe, expect, it } from 'vitest';
import { completionDeadline, completionJudged, findLatestDueCompletion, isTooFast, latestDueCompletion, normalDuration, runningLongAfter, runningLongVerdict } from '../../src/domain/run-duration.js';

const at = (iso: string) => new Date(iso);

describe('normalDuration', () => {
  it.each([
    { name: 'no verdict before five successes', samples: [1200, 1200, 1200, 1200], expected: null },
    { name: 'five equal samples', samples: [1200, 1200, 1200, 1200, 1200], expected: { medianSeconds: 1200, madSeconds: 0, samples: 5, usualLongestSeconds: 1200 } },
    { name: 'an outlier moves neither median nor MAD much', samples: [1200, 1180, 1220, 10_800, 1210, 1190], expected: { medianSeconds: 1205, madSeconds: 15, samples: 6, usualLongestSeconds: 1220 } },
    { name: 'only the newest 50 count', samples: [...Array(50).fill(60), ...Array(40).fill(6000)], expected: { medianSeconds: 60, madSeconds: 0, samples: 50, usualLongestSeconds: 60 } },
    { name: 'negative and non-finite samples are ignored', samples: [-5, Number.NaN, 100, 100, 100, 100], expected: null },
  ])('$name', ({ samples, expected }) => {
    expect(normalDuration(samples)).toEqual(expected);
  });
});

describe('runningLongAfter', () => {
  it.each([
    { name: 'a 20-minute nightly: 3 × median', normal: { medianSeconds: 1200, madSeconds: 30, samples: 10 }, override: null, expected: 3600 },
    { name: 'a 1-minute job: median + 10 minutes', normal: { medianSeconds: 60, madSeconds: 5, samples: 10 }, override: null, expected: 660 },
    { name: 'a noisy job: median + 6 MAD', normal: { medianSeconds: 3600, madSeconds: 1800, samples: 10 }, override: null, expected: 14_400 },
    { name: 'no history, no override: no verdict', normal: null, override: null, expected: null },
    { name: 'the override wins, history or not', normal: null, override: 900, expected: 900 },
  ])('$name', ({ normal, override, expected }) => {
    expect(runningLongAfter(normal, override)).toBe(expected);
  });
});

describe('a job whose duration varies by 10x', () => {
  // Newest first: a daily job of 6 minutes whose Sunday full load takes an hour (7 of its last 50 successes).
  const weekly = Array.from({ length: 50 }, (_, i) => (i % 7 === 3 ? 3600 : 360));
  it('a duration it keeps reaching (in at least a tenth of its successes, twice or more) is not running long', () => {
    const after = runningLongAfter(normalDuration(weekly), null)!;
    expect(after).toBeGreaterThan(3600);
    expect(after).toBe(5400);
  });
  it('an hourly job whose every fifth run takes 30 minutes instead of 1: told past 45 minutes, not at 11', () => {
    const fifth = Array.from({ length: 50 }, (_, i) => (i % 5 === 0 ? 1800 : 60));
    expect(runningLongAfter(normalDuration(fifth), null)).toBe(2700);
  });
  it('one slow night among twenty ordinary ones still moves nothing, nor two among fifty', () => {
    expect(runningLongAfter(normalDuration([1200, ...Array(19).fill(1200).map((d, i) => (i === 7 ? 10_800 : d))]), null)).toBe(3600);
    expect(runningLongAfter(normalDuration(Array.from({ length: 50 }, (_, i) => (i === 4 || i === 30 ? 10_800 : 1200))), null)).toBe(3600);
  });
});

describe('runningLongVerdict', () => {
  const normal = { medianSeconds: 1200, madSeconds: 0, samples: 6 };
  const startedAt = at('2026-03-10T02:00:00Z');
  it.each([
    { name: 'just under the threshold', now: '2026-03-10T02:59:59Z', timeout: 21_600, long: false },
    { name: 'at the threshold', now: '2026-03-10T03:00:00Z', timeout: 21_600, long: true },
    { name: 'a threshold past the timeout is the timeout’s to tell', now: '2026-03-10T04:00:00Z', timeout: 3600, long: false },
  ])('$name', ({ now, timeout, long }) => {
    expect(runningLongVerdict({ startedAt, now: at(now), timeoutSeconds: timeout, normal }).long).toBe(long);
  });
  it('says how long it has been running and the threshold', () => {
    expect(runningLongVerdict({ startedAt, now: at('2026-03-10T03:30:00Z'), timeoutSeconds: 21_600, normal })).toEqual({ long: true, afterSeconds: 3600, runningSeconds: 5400 });
  });
});

describe('isTooFast', () => {
  it.each([
    { duration: 3, min: 60, expected: true },
    { duration: 60, min: 60, expected: false },
    { duration: null, min: 60, expected: false },
    { duration: 3, min: null, expected: false },
  ])('$duration s under minimum $min → $expected', ({ duration, min, expected }) => {
    expect(isTooFast(duration, min)).toBe(expected);
  });
});

describe('completionDeadline', () => {
  const hourly = (timezone: string) => ({ cron: '0 * * * *', timezone });
  it.each([
    { name: 'same morning', tick: '2026-03-10T01:00:00Z', time: '06:00', tz: 'Europe/Berlin', expected: '2026-03-10T05:00:00Z' },
    { name: 'a late tick is due the next day', tick: '2026-03-10T22:30:00Z', time: '06:00', tz: 'Europe/Berlin', expected: '2026-03-11T05:00:00Z' },
    { name: 'a tick at the deadline time is due the next day', tick: '2026-03-10T05:00:00Z', time: '06:00', tz: 'Europe/Berlin', expected: '2026-03-11T05:00:00Z' },
    { name: 'spring forward: still 06:00 local (04:00Z)', tick: '2026-03-29T00:00:00Z', time: '06:00', tz: 'Europe/Berlin', expected: '2026-03-29T04:00:00Z' },
    { name: 'fall back: still 06:00 local (05:00Z)', tick: '2026-10-25T00:00:00Z', time: '06:00', tz: 'Europe/Berlin', expected: '2026-10-25T05:00:00Z' },
    { name: 'a zone of its own', tick: '2026-03-10T01:00:00Z', time: '06:00', tz: 'UTC', expected: '2026-03-10T06:00:00Z' },
  ])('$name', ({ tick, time, tz, expected }) => {
    expect(completionDeadline(at(tick), { time, timeZone: tz }, hourly('America/New_York')).toISOString()).toBe(new Date(expected).toISOString());
  });
  it('uses the workflow zone when completeBy names none', () => {
    expect(completionDeadline(at('2026-03-10T01:00:00Z'), { time: '06:00' }, hourly('Europe/Berlin')).toISOString()).toBe('2026-03-10T05:00:00.000Z');
  });

  // The schedule's DST rule (src/domain/schedule.ts), the same in every zone: the deadline is the first
  // `time` after the tick's local time on the local calendar; a time the fall-back night repeats falls due
  // at its first pass, or at its second for a tick already past the first (an hourly job's tick in the
  // repeated hour); a time the spring-forward gap skips falls due as late as the gap is long, and only for
  // a tick before it on the local clock (one after the gap has already passed it: the next day's).
  describe.each([
    {
      zone: 'America/New_York',
      fallBack: [
        { name: 'before the repeated hour: its first pass', tick: '2026-11-01T04:45:00Z', time: '01:30', expected: '2026-11-01T05:30:00Z' },
        { name: 'first pass, before the time: the first pass', tick: '2026-11-01T05:10:00Z', time: '01:30', expected: '2026-11-01T05:30:00Z' },
        { name: 'second pass, before the time: the second pass', tick: '2026-11-01T06:10:00Z', time: '01:30', expected: '2026-11-01T06:30:00Z' },
        { name: 'first pass, past the time: the next day', tick: '2026-11-01T05:50:00Z', time: '01:30', expected: '2026-11-02T06:30:00Z' },
      ],
      springForward: [
        { name: 'before the gap: as late as the gap is long (03:30 EDT)', tick: '2026-03-08T06:00:00Z', time: '02:30', expected: '2026-03-08T07:30:00Z' },
        { name: 'after the gap: the next day', tick: '2026-03-08T07:10:00Z', time: '02:30', expected: '2026-03-09T06:30:00Z' },
      ],
    },
    {
      zone: 'Europe/London',
      fallBack: [
        { name: 'before the repeated hour: its first pass', tick: '2026-10-24T23:45:00Z', time: '01:30', expected: '2026-10-25T00:30:00Z' },
        { name: 'second pass, before the time: the second pass', tick: '2026-10-25T01:10:00Z', time: '01:30', expected: '2026-10-25T01:30:00Z' },
        { name: 'first pass, past the time: the next day', tick: '2026-10-25T00:50:00Z', time: '01:30', expected: '2026-10-26T01:30:00Z' },
      ],
      springForward: [
        { name: 'before the gap: as late as the gap is long (02:30 BST)', tick: '2026-03-29T00:30:00Z', time: '01:30', expected: '2026-03-29T01:30:00Z' },
        { name: 'after the gap: the next day', tick: '2026-03-29T01:10:00Z', time: '01:30', expected: '2026-03-30T00:30:00Z' },
      ],
    },
    {
      zone: 'America/Santiago',
      fallBack: [
        { name: 'before the repeated hour: its first pass', tick: '2026-04-05T01:45:00Z', time: '23:30', expected: '2026-04-05T02:30:00Z' },
        { name: 'second pass, before the time: the second pass', tick: '2026-04-05T03:10:00Z', time: '23:30', expected: '2026-04-05T03:30:00Z' },
        { name: 'first pass, past the time: the next day', tick: '2026-04-05T02:50:00Z', time: '23:30', expected: '2026-04-06T03:30:00Z' },
      ],
      springForward: [
        { name: 'before the gap (at midnight): as late as the gap is long (01:30)', tick: '2026-09-06T03:00:00Z', time: '00:30', expected: '2026-09-06T04:30:00Z' },
        { name: 'after the gap: the next day', tick: '2026-09-06T04:10:00Z', time: '00:30', expected: '2026-09-07T03:30:00Z' },
      ],
    },
    {
      zone: 'Australia/Lord_Howe',
      fallBack: [
        { name: 'before the repeated half hour: its first pass', tick: '2026-04-04T14:00:00Z', time: '01:45', expected: '2026-04-04T14:45:00Z' },
        { name: 'second pass, before the time: the second pass', tick: '2026-04-04T15:05:00Z', time: '01:45', expected: '2026-04-04T15:15:00Z' },
        { name: 'first pass, past the time: the next day', tick: '2026-04-04T14:50:00Z', time: '01:45', expected: '2026-04-05T15:15:00Z' },
      ],
      springForward: [
        { name: 'before the half-hour gap: as late as the gap is long (02:45)', tick: '2026-10-03T14:30:00Z', time: '02:15', expected: '2026-10-03T15:45:00Z' },
        { name: 'after the gap: the next day', tick: '2026-10-03T15:40:00Z', time: '02:15', expected: '2026-10-04T15:15:00Z' },
      ],
    },
    {
      zone: 'Pacific/Chatham',
      fallBack: [
        { name: 'before the repeated hour (02:45–03:45): its first pass', tick: '2026-04-04T12:15:00Z', time: '03:00', expected: '2026-04-04T13:15:00Z' },
        { name: 'second pass, before the time: the second pass', tick: '2026-04-04T14:05:00Z', time: '03:00', expected: '2026-04-04T14:15:00Z' },
        { name: 'first pass, past the time: the next day', tick: '2026-04-04T13:30:00Z', time: '03:00', expected: '2026-04-05T14:15:00Z' },
      ],
      springForward: [
        { name: 'before the gap (02:45–03:45): as late as the gap is long (04:00)', tick: '2026-09-26T13:15:00Z', time: '03:00', expected: '2026-09-26T14:15:00Z' },
        { name: 'after the gap: the next day', tick: '2026-09-26T14:05:00Z', time: '03:00', expected: '2026-09-27T13:15:00Z' },
      ],
    },
  ])('across DST in $zone', ({ zone, fallBack, springForward }) => {
    it.each(fallBack)('fall back: $name', ({ tick, time, expected }) => {
      expect(completionDeadline(at(tick), { time }, { cron: '*/5 * * * *', timezone: zone }).toISOString()).toBe(new Date(expected).toISOString());
    });
    it.each(springForward)('spring forward: $name', ({ tick, time, expected }) => {
      expect(completionDeadline(at(tick), { time }, { cron: '*/5 * * * *', timezone: zone }).toISOString()).toBe(new Date(expected).toISOString());
    });
    it('a deadline named in the zone but not the workflow’s follows the same rule', () => {
      for (const c of [...fallBack, ...springForward]) {
        expect(completionDeadline(at(c.tick), { time: c.time, timeZone: zone }, hourly('UTC')).toISOString(), c.name).toBe(new Date(c.expected).toISOString());
      }
    });
  });

  it.each([
    // A daily 01:15 the gap moves to 02:15 BST stands for 01:15: its 01:30 deadline is the gap-moved 02:30 BST, as on any other day 15 minutes on.
    { name: 'a tick the gap moved is due by the moved deadline of its own day', cron: '15 1 * * *', zone: 'Europe/London', tick: '2026-03-29T01:15:00Z', time: '01:30', expected: '2026-03-29T01:30:00Z' },
    // Berlin's 02:30 fires at 03:30 CEST: a 03:00 deadline came before the run could start, so the next day's.
    { name: 'a moved tick past a real deadline time: the next day', cron: '30 2 * * *', zone: 'Europe/Berlin', tick: '2026-03-29T01:30:00Z', time: '03:00', expected: '2026-03-30T01:00:00Z' },
    // An hourly 01:10 and 02:10 are one tick at 02:10 BST: a tick of 02:10, past 01:30.
    { name: 'an hourly tick the gap merged stands at its own time', cron: '10 * * * *', zone: 'Europe/London', tick: '2026-03-29T01:10:00Z', time: '01:30', expected: '2026-03-30T00:30:00Z' },
  ])('$name', ({ cron, zone, tick, time, expected }) => {
    expect(completionDeadline(at(tick), { time }, { cron, timezone: zone }).toISOString()).toBe(new Date(expected).toISOString());
  });
});

describe('latestDueCompletion', () => {
  const nightly = { cron: '0 2 * * *', timezone: 'Europe/Berlin' };
  const completeBy = { time: '06:00' };
  it.each([
    { name: 'before today’s deadline: yesterday’s tick', now: '2026-03-10T04:59:00Z', tick: '2026-03-09T01:00:00Z' },
    { name: 'at today’s deadline: today’s tick', now: '2026-03-10T05:00:00Z', tick: '2026-03-10T01:00:00Z' },
  ])('$name', ({ now, tick }) => {
    expect(latestDueCompletion(nightly, completeBy, at(now))?.tick.toISOString()).toBe(new Date(tick).toISOString());
  });

  // Remembered until the next tick's deadline: the same answers as the walk, whichever order the clock is read in,
  // across both DST nights, for frequent and irregular crons and a deadline in another zone.
  it.each([
    { cron: '*/30 * * * *', timezone: 'Europe/Berlin', completeBy: { time: '06:00' } },
    { cron: '30 2 * * *', timezone: 'Europe/Berlin', completeBy: { time: '02:45' } },
    { cron: '15 * * * 1-5', timezone: 'America/New_York', completeBy: { time: '09:00', timeZone: 'Australia/Lord_Howe' } },
    { cron: '0 0 * * *', timezone: 'America/Havana', completeBy: { time: '00:30' } },
  ])('remembered: the walk’s answer for $cron in $timezone', ({ cron, timezone, completeBy: by }) => {
    const schedule = { cron, timezone };
    const nows: number[] = [];
    for (const [from, days] of [['2026-03-07T00:00:00Z', 3], ['2026-03-28T00:00:00Z', 4], ['2026-10-24T00:00:00Z', 4], ['2026-11-01T00:00:00Z', 2]] as const) {
      for (let m = 0; m < days * 1440; m += 97) nows.push(Date.parse(from) + m * 60_000);
    }
    const shuffled = [...nows].sort((a, b) => ((a * 7919) % 1009) - ((b * 7919) % 1009));
    const walked = new Map(nows.map((t) => [t, findLatestDueCompletion(schedule, by, new Date(t))]));
    for (const t of [...nows, ...shuffled]) expect(latestDueCompletion(schedule, by, new Date(t)), new Date(t).toISOString()).toEqual(walked.get(t));
  });
});

describe('the policy version and the duration fields', () => {
  it('completeBy read back from JSON is the same policy; a changed time is a change', async () => {
    const { effectivePolicy, policyChanges } = await import('../../src/domain/policy-version.js');
    const { profileFor } = await import('../../src/domain/cadence.js');
    const profile = profileFor('0 2 * * *', 'UTC', { completeBy: { time: '06:00', timeZone: 'Europe/Berlin' }, minDurationSeconds: 30 }, at('2026-03-10T00:00:00Z'));
    const stored = JSON.parse(JSON.stringify(effectivePolicy(profile)));
    expect(policyChanges(stored, effectivePolicy(profile))).toEqual([]);
    // A version stored before these fields existed is the same policy for a workflow that sets none of them.
    const plain = profileFor('0 2 * * *', 'UTC', {}, at('2026-03-10T00:00:00Z'));
    const { minDurationSeconds, runningLongAfterSeconds, completeBy, ...older } = effectivePolicy(plain);
    expect([minDurationSeconds, runningLongAfterSeconds, completeBy]).toEqual([null, null, null]);
    expect(policyChanges(older, effectivePolicy(plain))).toEqual([]);
    const later = profileFor('0 2 * * *', 'UTC', { completeBy: { time: '07:00', timeZone: 'Europe/Berlin' }, minDurationSeconds: 30 }, at('2026-03-10T00:00:00Z'));
    expect(policyChanges(stored, effectivePolicy(later))).toEqual([{ field: 'completeBy', from: { time: '06:00', timeZone: 'Europe/Berlin' }, to: { time: '07:00', timeZone: 'Europe/Berlin' } }]);
  });
});

describe('completionJudged', () => {
  it('a skipped tick is not judged; a tick with no row yet is, unless the outside scheduler may not run it (a DST night)', () => {
    expect([completionJudged('skipped'), completionJudged('failed'), completionJudged('running'), completionJudged(undefined)]).toEqual([false, true, true, true]);
    expect([completionJudged(undefined, true), completionJudged(null, true), completionJudged('running', true), completionJudged('skipped', true)]).toEqual([false, false, true, false]);
  });
});
