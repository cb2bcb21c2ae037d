import { describe, expect, it } from 'vitest';
import { cadenceSample, derivePolicy, profileFor, typicalGapSeconds } from '../../src/domain/cadence.js';
import { escalateAtFor } from '../../src/domain/escalate-at.js';
import { checkCron, fireTimesAfter, latestFireAtOrBefore } from '../../src/domain/schedule.js';

/** Crons that fire rarely or unevenly: their typical gap, the policy it gives, and what it costs to work out. */

const AT = new Date('2026-03-10T00:00:00Z');
const MIN = 60;
const HOUR = 3600;
const DAY = 86_400;
const YEAR_MS = 365.25 * DAY * 1000;

const iso = (ds: Date[]) => ds.map((d) => d.toISOString().slice(0, 16));

describe('rare and odd schedules: the typical gap, not the longest or the shortest', () => {
  it.each([
    // cron, zone, typical gap, why
    ['0 0 29 2 *', 'UTC', 1461 * DAY, 'leap days: four years'],
    ['0 0 31 * *', 'UTC', 61 * DAY, 'the seven months with a 31st: two months apart, mostly'],
    ['0 0 1 1 *', 'UTC', 365 * DAY, 'yearly'],
    ['@yearly', 'Asia/Kathmandu', 365 * DAY, 'the macro, in a +05:45 zone'],
    ['0 0 * * 0', 'UTC', 7 * DAY, 'weekly'],
    ['0 9 1-7 * 1', 'UTC', DAY, 'both day fields restricted: days 1 to 7 and every Monday (crontab(5) OR), mostly daily'],
    ['0 9 */7 * 1', 'UTC', 7 * DAY, 'day of month starts with *: the 1st, 8th, … that are Mondays (AND), weekly in such a month'],
    ['*/7 * * * *', 'UTC', 7 * MIN, '7 min, then 4 at the hour'],
    ['0 */5 * * *', 'UTC', 5 * HOUR, '5 h four times, then 4 h'],
    ['30 2 * * *', 'America/New_York', DAY, 'a daily time the spring-forward night skips'],
    ['@daily', 'UTC', DAY, 'macro'],
    ['@hourly', 'Australia/Lord_Howe', HOUR, 'macro, in a zone whose DST is half an hour'],
    ['0 0 * 2 1#5', 'UTC', 10_227 * DAY, 'a fifth Monday in February: 28 years'],
  ] as const)('%s in %s reads as %d s (%s)', (cron, tz, gap, _why) => {
    expect(checkCron(cron)).toEqual({ ok: true });
    expect(typicalGapSeconds(cron, tz, AT)).toBe(gap);
  });

  it('a yearly cadence is 365 days whatever the year (a leap year in the sample does not move it, nor the policy version)', () => {
    const seen = new Set<number>();
    for (let year = 2026; year < 2040; year++) seen.add(typicalGapSeconds('0 0 1 1 *', 'Europe/Berlin', new Date(Date.UTC(year, 5, 1))));
    expect([...seen]).toEqual([365 * DAY]);
    const leap = new Set<number>();
    for (let year = 2026; year < 2040; year++) leap.add(typicalGapSeconds('0 0 29 2 *', 'Europe/Berlin', new Date(Date.UTC(year, 5, 1))));
    expect([...leap]).toEqual([1461 * DAY]);
  });

  it('fires where the calendar says: leap days only, 31sts only, the skipped 02:30 an hour late', () => {
    expect(iso(fireTimesAfter('0 0 29 2 *', 'UTC', AT, 3))).toEqual(['2028-02-29T00:00', '2032-02-29T00:00', '2036-02-29T00:00']);
    // 2100 is no leap year: eight years.
    expect(iso(fireTimesAfter('0 0 29 2 *', 'UTC', new Date('2096-03-01T00:00:00Z'), 1))).toEqual(['2104-02-29T00:00']);
    expect(iso(fireTimesAfter('0 0 31 * *', 'UTC', AT, 4))).toEqual(['2026-03-31T00:00', '2026-05-31T00:00', '2026-07-31T00:00', '2026-08-31T00:00']);
    // New York springs forward on 8 March 2026: 02:30 EST does not exist and fires at 03:30 EDT (07:30 UTC).
    expect(iso(fireTimesAfter('30 2 * * *', 'America/New_York', new Date('2026-03-07T00:00:00Z'), 3))).toEqual(['2026-03-07T07:30', '2026-03-08T07:30', '2026-03-09T06:30']);
    expect(latestFireAtOrBefore('0 0 29 2 *', 'UTC', AT)).toEqual(new Date('2024-02-29T00:00:00Z'));
    // "First Monday" written crontab's way is days 1 to 7 OR every Monday (crontab(5)); the first Monday itself is `1#1`.
    expect(iso(fireTimesAfter('0 9 1-7 * 1', 'UTC', AT, 5)).map((d) => d.slice(0, 10))).toEqual(['2026-03-16', '2026-03-23', '2026-03-30', '2026-04-01', '2026-04-02']);
    expect(iso(fireTimesAfter('0 9 * * 1#1', 'UTC', AT, 3))).toEqual(['2026-04-06T09:00', '2026-05-04T09:00', '2026-06-01T09:00']);
  });

  it('samples at most eight years of fire times, and the second one always', () => {
    const span = (cron: string) => {
      const s = cadenceSample(cron, 'UTC', AT);
      return { count: s.length, years: Math.round(((s.at(-1)!.getTime() - s[0]!.getTime()) / YEAR_MS) * 10) / 10 };
    };
    expect(span('*/5 * * * *')).toEqual({ count: 65, years: 0 });
    expect(span('0 0 1 * *').count).toBe(65);
    expect(span('0 0 1 1 *')).toEqual({ count: 9, years: 8 });
    expect(span('0 0 29 2 *')).toEqual({ count: 3, years: 8 });
    // Once in 28 to 40 years: the first two only (64 of them were 1,800 years of cron arithmetic).
    expect(span('0 0 * 2 1#5')).toEqual({ count: 2, years: 28 });
  });

  it("works out a rare cron's profile from that bounded sample, in any zone", () => {
    // The bound itself is the sample size above (no wall-clock assertion here: that belongs in a benchmark).
    for (const tz of ['Etc/GMT-1', 'Etc/GMT-2', 'Etc/GMT-3', 'Etc/GMT-4', 'Etc/GMT-5']) {
      expect(cadenceSample('0 0 * 2 1#5', tz, AT)).toHaveLength(2);
      expect(profileFor('0 0 * 2 1#5', tz, {}, AT)).toMatchObject({ retries: 3, alertAfter: 1, firstSeverity: 'critical' });
    }
  });
});

describe('patience from every minute to every 28 years', () => {
  const gaps = [60, 300, 420, 600, 900, 1800, 3600, 2 * HOUR, 5 * HOUR, 12 * HOUR, DAY, 7 * DAY, 31 * DAY, 61 * DAY, 365 * DAY, 1461 * DAY, 10_227 * DAY];
  const delay = (gap: number, multiplier: number) => escalateAtFor(AT, 'warning', multiplier, gap)!.getTime() - AT.getTime();

  it('moves one way only: more retries, fewer failures, a smaller multiplier, more grace and time; a deadline growing to a day, then staying', () => {
    const ps = gaps.map(derivePolicy);
    for (let i = 1; i < ps.length; i++) {
      const [a, b] = [ps[i - 1]!, ps[i]!];
      const label = `${gaps[i - 1]} → ${gaps[i]}`;
      expect(b.retries, label).toBeGreaterThanOrEqual(a.retries);
      expect(b.alertAfter, label).toBeLessThanOrEqual(a.alertAfter);
      expect(b.escalationMultiplier, label).toBeLessThanOrEqual(a.escalationMultiplier);
      expect(b.graceSeconds, label).toBeGreaterThanOrEqual(a.graceSeconds);
      expect(b.timeoutSeconds, label).toBeGreaterThanOrEqual(a.timeoutSeconds);
      expect(b.catchUpSeconds, label).toBeGreaterThanOrEqual(a.catchUpSeconds);
      if (a.firstSeverity === 'critical') expect(b.firstSeverity, label).toBe('critical');
      expect(delay(gaps[i]!, b.escalationMultiplier), label).toBeGreaterThanOrEqual(delay(gaps[i - 1]!, a.escalationMultiplier));
    }
    expect(ps.at(-1)).toMatchObject({ retries: 3, alertAfter: 1, firstSeverity: 'critical', escalationMultiplier: 1, graceSeconds: 1800, timeoutSeconds: 6 * HOUR, catchUpSeconds: 6 * HOUR });
  });

  it('a warning of a weekly, yearly or leap-day job escalates after multiplier × a day, not × its cadence (a year, four years)', () => {
    for (const gap of [DAY, 7 * DAY, 365 * DAY, 1461 * DAY, 10_227 * DAY]) expect(delay(gap, 1), `${gap}`).toBe(DAY * 1000);
    expect(delay(7 * DAY, 2.5)).toBe(2.5 * DAY * 1000);
    expect(delay(HOUR, 3)).toBe(3 * HOUR * 1000);
    // With the schedule: a yearly job opened on New Year's Day escalates the next day; a leap-day job on 1 March.
    expect(escalateAtFor(new Date('2027-01-01T00:05:00Z'), 'warning', 1, 365 * DAY, { cron: '0 0 1 1 *', timezone: 'UTC' })).toEqual(new Date('2027-01-02T00:05:00Z'));
    expect(escalateAtFor(new Date('2028-02-29T00:31:00Z'), 'warning', 1, 1461 * DAY, { cron: '0 0 29 2 *', timezone: 'UTC' })).toEqual(new Date('2028-03-01T00:31:00Z'));
    // A weekly job is no rest between its ticks: two days.
    expect(escalateAtFor(new Date('2026-03-15T00:10:00Z'), 'warning', 2, 7 * DAY, { cron: '0 0 * * 0', timezone: 'UTC' })).toEqual(new Date('2026-03-17T00:10:00Z'));
  });
});
