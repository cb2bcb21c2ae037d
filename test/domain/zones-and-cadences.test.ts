import { describe, expect, it } from 'vitest';
import { profileFor } from '../../src/domain/cadence.js';
import { zoneRangeText, zoneText } from '../../src/domain/durations.js';
import { fireTimesAfter, latestFireAtOrBefore, nextFireAfter, wallTimeAt } from '../../src/domain/schedule.js';
import { timeZoneProblem, zoneLabel } from '../../src/domain/time-zone.js';
import { tickCandidates } from '../../src/domain/tick-match.js';

/** The cadence profile and the schedule in the zones and at the cadences the product is judged in. */

const ZONES = ['UTC', 'Etc/GMT+5', 'Asia/Kathmandu', 'Asia/Kolkata', 'Pacific/Chatham', 'America/St_Johns', 'Pacific/Kiritimati', 'Pacific/Pago_Pago', 'Asia/Almaty', 'America/Mexico_City'];
const AT = new Date('2026-06-15T00:00:00Z');
const HOUR = 3600;
const DAY = 86_400;

/** From the most frequent to the rarest, with the typical gap each must read as. */
const CADENCES: [string, number][] = [
  ['* * * * *', 60],
  ['*/5 9-17 * * 1-5', 300], // the night and the weekend are not the typical gap
  ['*/7 * * * *', 420], // 7, 7, …, then 4 minutes at the hour
  ['0 * * * *', HOUR],
  ['@hourly', HOUR],
  ['0 */3 * * *', 3 * HOUR],
  ['0 9 * * 1-5', DAY],
  ['@daily', DAY],
  ['0 0 * * 0', 7 * DAY],
  ['@weekly', 7 * DAY],
  ['0 0 1 * *', 31 * DAY],
  ['0 0 31 * *', 61 * DAY], // the months with a 31st: two months apart, mostly
  ['0 0 1 1 *', 365 * DAY],
  ['0 0 29 2 *', 1461 * DAY], // leap years
];

describe('the cadence profile', () => {
  it('reads each cadence by its typical gap, the same in every zone', () => {
    for (const [cron, gap] of CADENCES) {
      const utc = profileFor(cron, 'UTC', {}, AT);
      expect(utc.cadenceSeconds, cron).toBe(gap);
      for (const tz of ZONES) expect(profileFor(cron, tz, {}, AT), `${cron} in ${tz}`).toEqual(utc);
    }
  });

  it('moves one way only from every minute to every four years, and holds the anchors of DESIGN.md', () => {
    const ps = CADENCES.map(([cron]) => profileFor(cron, 'Asia/Kathmandu', {}, AT));
    for (let i = 1; i < ps.length; i++) {
      const [a, b] = [ps[i - 1]!, ps[i]!];
      const label = CADENCES[i]![0];
      expect(b.retries, label).toBeGreaterThanOrEqual(a.retries);
      expect(b.alertAfter, label).toBeLessThanOrEqual(a.alertAfter);
      expect(b.escalationMultiplier, label).toBeLessThanOrEqual(a.escalationMultiplier);
      expect(b.graceSeconds, label).toBeGreaterThanOrEqual(a.graceSeconds);
      if (a.firstSeverity === 'critical') expect(b.firstSeverity, label).toBe('critical');
    }
    const anchor = (cron: string) => profileFor(cron, 'Pacific/Chatham', {}, AT);
    expect(anchor('*/5 9-17 * * 1-5')).toMatchObject({ retries: 0, alertAfter: 3, firstSeverity: 'warning' });
    expect(anchor('0 * * * *')).toMatchObject({ retries: 2, alertAfter: 2, firstSeverity: 'warning' });
    expect(anchor('0 9 * * 1-5')).toMatchObject({ retries: 3, alertAfter: 1, firstSeverity: 'critical' });
    expect(anchor('0 0 29 2 *')).toMatchObject({ retries: 3, alertAfter: 1, firstSeverity: 'critical' });
  });
});

describe('fire times at the zone wall clock', () => {
  it('a 09:00 job fires at 09:00 on each zone clock, Etc/GMT+5 five hours behind UTC', () => {
    const nine = Object.fromEntries(ZONES.map((tz) => [tz, nextFireAfter('0 9 * * *', tz, AT).toISOString()]));
    expect(nine).toEqual({
      UTC: '2026-06-15T09:00:00.000Z',
      'Etc/GMT+5': '2026-06-15T14:00:00.000Z',
      'Asia/Kathmandu': '2026-06-15T03:15:00.000Z',
      'Asia/Kolkata': '2026-06-15T03:30:00.000Z',
      'Pacific/Chatham': '2026-06-15T20:15:00.000Z',
      'America/St_Johns': '2026-06-15T11:30:00.000Z',
      'Pacific/Kiritimati': '2026-06-15T19:00:00.000Z',
      'Pacific/Pago_Pago': '2026-06-15T20:00:00.000Z',
      'Asia/Almaty': '2026-06-15T04:00:00.000Z',
      'America/Mexico_City': '2026-06-15T15:00:00.000Z',
    });
  });

  it('business hours in Kathmandu: 09:00 to 17:55 local, Monday to Friday, nothing at night or at the weekend', () => {
    // Friday 19 June 2026, 17:50 NPT is 12:05 UTC.
    const ticks = fireTimesAfter('*/5 9-17 * * 1-5', 'Asia/Kathmandu', new Date('2026-06-19T12:00:00Z'), 4);
    expect(ticks.map((t) => new Date(wallTimeAt('Asia/Kathmandu', t)).toISOString().slice(0, 16))).toEqual(['2026-06-19T17:50', '2026-06-19T17:55', '2026-06-22T09:00', '2026-06-22T09:05']);
  });

  it('months without a 31st, a leap day, a new year across the date line', () => {
    expect(fireTimesAfter('0 0 31 * *', 'Pacific/Kiritimati', AT, 3).map((t) => new Date(wallTimeAt('Pacific/Kiritimati', t)).toISOString().slice(0, 10))).toEqual(['2026-07-31', '2026-08-31', '2026-10-31']);
    expect(fireTimesAfter('0 0 29 2 *', 'Pacific/Pago_Pago', AT, 2).map((t) => t.toISOString())).toEqual(['2028-02-29T11:00:00.000Z', '2032-02-29T11:00:00.000Z']);
    // Kiritimati sees the new year first and Pago Pago last, 25 hours apart.
    const kiri = nextFireAfter('0 0 1 1 *', 'Pacific/Kiritimati', AT);
    const pago = nextFireAfter('0 0 1 1 *', 'Pacific/Pago_Pago', AT);
    expect([kiri.toISOString(), pago.toISOString()]).toEqual(['2026-12-31T10:00:00.000Z', '2027-01-01T11:00:00.000Z']);
    expect(latestFireAtOrBefore('0 0 1 1 *', 'Pacific/Kiritimati', new Date('2027-01-01T00:00:00Z'))).toEqual(kiri);
  });

  it('Almaty moved from +06 to +05 by law on 1 March 2024: a daily job keeps 09:00 local on both sides', () => {
    const ticks = fireTimesAfter('0 9 * * *', 'Asia/Almaty', new Date('2024-02-28T00:00:00Z'), 3);
    expect(ticks.map((t) => t.toISOString())).toEqual(['2024-02-28T03:00:00.000Z', '2024-02-29T03:00:00.000Z', '2024-03-01T04:00:00.000Z']);
  });

  it('a report started within the grace is the tick it belongs to, at :30 and :45 offsets too', () => {
    for (const [tz, tick] of [['Asia/Kathmandu', '2026-06-15T03:15:00Z'], ['Asia/Kolkata', '2026-06-15T03:30:00Z'], ['America/St_Johns', '2026-06-15T11:30:00Z'], ['Pacific/Chatham', '2026-06-15T20:15:00Z']] as const) {
      const schedule = { cron: '0 9 * * *', timezone: tz, mode: 'observed' };
      const profile = profileFor(schedule.cron, tz, {}, AT);
      const t = new Date(tick).getTime();
      expect(tickCandidates(schedule, new Date(t + profile.graceSeconds * 1000), profile), tz).toEqual([new Date(t)]);
      // A start past the grace belongs to no tick: that tick is missed, at tick + grace.
      expect(tickCandidates(schedule, new Date(t + profile.graceSeconds * 1000 + 1000), profile), tz).toEqual([]);
    }
  });
});

describe('zones as people read them', () => {
  it('an Etc/GMT zone is shown with the offset it is, since its sign is inverted', () => {
    expect(zoneLabel('Etc/GMT+5')).toBe('Etc/GMT+5 (UTC−05:00)');
    expect(zoneLabel('Etc/GMT-14')).toBe('Etc/GMT-14 (UTC+14:00)');
    expect(zoneLabel('Asia/Kathmandu')).toBe('Asia/Kathmandu');
    expect(zoneText(new Date('2026-06-15T14:00:00Z'), 'Etc/GMT+5')).toBe('2026-06-15 09:00 Etc/GMT+5 (UTC−05:00)');
    expect(zoneRangeText(new Date('2026-06-15T14:00:00Z'), new Date('2026-06-15T15:00:00Z'), 'Etc/GMT+5')).toBe('2026-06-15 09:00 to 10:00 Etc/GMT+5 (UTC−05:00)');
  });

  it('a zone that is none is told why, an offset with the tzdb spelling of it', () => {
    expect(timeZoneProblem('Asia/Kathmandu')).toBeUndefined();
    expect(timeZoneProblem('Mars/Base')).toBe('not an IANA time zone (such as "Europe/Berlin" or "UTC")');
    // A typo of a zone says which one it is a typo of, by its stored name.
    expect(timeZoneProblem('Europe/Berln')).toBe('not an IANA time zone (such as "Europe/Berlin" or "UTC"); did you mean "Europe/Berlin"?');
    expect(timeZoneProblem('America/New_Yrok')).toBe('not an IANA time zone (such as "Europe/Berlin" or "UTC"); did you mean "America/New_York"?');
    expect(timeZoneProblem('Asia/Kolkatta')).toBe('not an IANA time zone (such as "Europe/Berlin" or "UTC"); did you mean "Asia/Kolkata"?');
    expect(timeZoneProblem('')).toMatch(/^empty: name an IANA time zone/);
    expect(timeZoneProblem('utc+2')).toMatch(/an offset is not a zone .*"Etc\/GMT-2" for a fixed UTC\+2 \(the Etc\/GMT sign is inverted\)/);
    expect(timeZoneProblem('-05:00')).toContain('"Etc/GMT+5" for a fixed UTC−5');
    expect(timeZoneProblem('+05:45')).toMatch(/an offset is not a zone .*name the place, such as "Asia\/Kathmandu"/);
    expect(timeZoneProblem('+05:45')).not.toContain('Etc/GMT');
    expect(timeZoneProblem('Etc/GMT+14')).toContain('"Etc/GMT-14" (UTC+14) to "Etc/GMT+12" (UTC−12)');
  });
});
