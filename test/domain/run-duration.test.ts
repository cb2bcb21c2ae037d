import { describe, expect, it } from 'vitest';
import { completionDeadline, isTooFast, latestDueCompletion, normalDuration, runningLongAfter, runningLongVerdict } from '../../src/domain/run-duration.js';

const at = (iso: string) => new Date(iso);

describe('normalDuration', () => {
  it.each([
    { name: 'no verdict before five successes', samples: [1200, 1200, 1200, 1200], expected: null },
    { name: 'five equal samples', samples: [1200, 1200, 1200, 1200, 1200], expected: { medianSeconds: 1200, madSeconds: 0, samples: 5 } },
    { name: 'an outlier moves neither median nor MAD much', samples: [1200, 1180, 1220, 10_800, 1210, 1190], expected: { medianSeconds: 1205, madSeconds: 15, samples: 6 } },
    { name: 'only the newest 50 count', samples: [...Array(50).fill(60), ...Array(40).fill(6000)], expected: { medianSeconds: 60, madSeconds: 0, samples: 50 } },
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
  it.each([
    { name: 'same morning', tick: '2026-03-10T01:00:00Z', time: '06:00', tz: 'Europe/Berlin', expected: '2026-03-10T05:00:00Z' },
    { name: 'a late tick is due the next day', tick: '2026-03-10T22:30:00Z', time: '06:00', tz: 'Europe/Berlin', expected: '2026-03-11T05:00:00Z' },
    { name: 'a tick at the deadline time is due the next day', tick: '2026-03-10T05:00:00Z', time: '06:00', tz: 'Europe/Berlin', expected: '2026-03-11T05:00:00Z' },
    { name: 'spring forward: still 06:00 local (04:00Z)', tick: '2026-03-29T00:00:00Z', time: '06:00', tz: 'Europe/Berlin', expected: '2026-03-29T04:00:00Z' },
    { name: 'fall back: still 06:00 local (05:00Z)', tick: '2026-10-25T00:00:00Z', time: '06:00', tz: 'Europe/Berlin', expected: '2026-10-25T05:00:00Z' },
    { name: 'a zone of its own', tick: '2026-03-10T01:00:00Z', time: '06:00', tz: 'UTC', expected: '2026-03-10T06:00:00Z' },
  ])('$name', ({ tick, time, tz, expected }) => {
    expect(completionDeadline(at(tick), { time, timeZone: tz }, 'America/New_York').toISOString()).toBe(new Date(expected).toISOString());
  });
  it('uses the workflow zone when completeBy names none', () => {
    expect(completionDeadline(at('2026-03-10T01:00:00Z'), { time: '06:00' }, 'Europe/Berlin').toISOString()).toBe('2026-03-10T05:00:00.000Z');
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
