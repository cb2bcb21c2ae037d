import { describe, expect, it } from 'vitest';
import { checkCron, crontabCheck, normalizeCron } from '../../src/domain/cron.js';
import { fireTimesAfter, latestFireAtOrBefore, nextFireAfter } from '../../src/domain/schedule.js';
import { zoneOf } from '../../src/domain/zone.js';

const days = (cron: string, tz: string, from: string, n: number) => fireTimesAfter(cron, tz, new Date(from), n).map((d) => d.toISOString().slice(0, 16));

describe('day of month and day of week, as crontab(5) reads them', () => {
  it('both restricted (neither starts with *): either one matching fires', () => {
    // 2026-04-01 is a Wednesday: the 1st and every Monday.
    expect(days('0 0 1 * 1', 'UTC', '2026-03-28T00:00:00Z', 4)).toEqual(['2026-03-30T00:00', '2026-04-01T00:00', '2026-04-06T00:00', '2026-04-13T00:00']);
  });

  it('a field that starts with * is not restricted: both must match (odd days that are Mondays)', () => {
    expect(days('0 0 */2 * 1', 'UTC', '2026-03-01T00:00:00Z', 4)).toEqual(['2026-03-09T00:00', '2026-03-23T00:00', '2026-04-13T00:00', '2026-04-27T00:00']);
    // The latest fire time agrees with the next one.
    expect(latestFireAtOrBefore('0 0 */2 * 1', 'UTC', new Date('2026-04-12T23:59:00Z'))).toEqual(new Date('2026-03-23T00:00:00Z'));
    // A stepped day of week against a day of month: the 13ths that are Sundays or Fridays.
    expect(days('0 0 13 * */5', 'UTC', '2026-01-01T00:00:00Z', 3)).toEqual(['2026-02-13T00:00', '2026-03-13T00:00', '2026-09-13T00:00']);
  });

  it('in a zone, the days are the zone\'s days, and a minute-level job walks only its own days', () => {
    // 00:00 Europe/Berlin on Monday 2026-03-09 is 23:00 UTC on Sunday the 8th.
    expect(days('0 0 */2 * 1', 'Europe/Berlin', '2026-03-01T00:00:00Z', 2)).toEqual(['2026-03-08T23:00', '2026-03-22T23:00']);
    expect(days('* 12 */2 * 1', 'UTC', '2026-03-01T00:00:00Z', 2)).toEqual(['2026-03-09T12:00', '2026-03-09T12:01']);
    expect(nextFireAfter('* 12 */2 * 1', 'UTC', new Date('2026-03-09T12:59:00Z'))).toEqual(new Date('2026-03-23T12:00:00Z'));
  });

  it('7 is Sunday, and a value named twice is read once', () => {
    expect(checkCron('0 0 * * 0,7')).toEqual({ ok: true });
    expect(days('0 0 * * 0,7', 'UTC', '2026-03-01T00:00:00Z', 2)).toEqual(['2026-03-08T00:00', '2026-03-15T00:00']);
    expect(days('0 0 * * 5-7,0', 'UTC', '2026-03-01T00:00:00Z', 3)).toEqual(['2026-03-06T00:00', '2026-03-07T00:00', '2026-03-08T00:00']);
    expect(days('1-5,3 * * * *', 'UTC', '2026-03-01T00:00:00Z', 6)).toEqual(['2026-03-01T00:01', '2026-03-01T00:02', '2026-03-01T00:03', '2026-03-01T00:04', '2026-03-01T00:05', '2026-03-01T01:01']);
  });
});

describe('macros and spelling', () => {
  it('@midnight is @daily; a macro in capitals is read and stored in lower case; an expression is stored trimmed', () => {
    for (const cron of ['@midnight', '@DAILY', '@Hourly', ' @daily ', ' 0 9 * * 1-5 ']) expect(checkCron(cron), cron).toEqual({ ok: true });
    expect(days('@midnight', 'UTC', '2026-03-01T12:00:00Z', 1)).toEqual(['2026-03-02T00:00']);
    expect(normalizeCron('@DAILY')).toBe('@daily');
    expect(normalizeCron(' @weekly\t')).toBe('@weekly');
    expect(normalizeCron(' 0 9 * * 1-5 ')).toBe('0 9 * * 1-5');
    expect(crontabCheck('@DAILY')).toEqual({ ok: true });
    // Stored before this spelling was normalised, an untrimmed macro still fires.
    expect(days(' @daily ', 'UTC', '2026-03-01T12:00:00Z', 1)).toEqual(['2026-03-02T00:00']);
  });

  it('H (hashed) is refused, naming the field: it would be a different minute in each process', () => {
    const check = checkCron('H 2 * * *');
    expect(check.ok).toBe(false);
    expect(!check.ok && check.reason).toMatch(/"H".*not supported/);
    expect(checkCron('H(0-29) * * * *').ok).toBe(false);
    // Day names with an h in them are no H.
    expect(checkCron('0 9 * * MON-THU')).toEqual({ ok: true });
    expect(checkCron('0 9 * MAR,JUN *')).toEqual({ ok: true });
  });

  it('six fields (seconds) are refused with the count; a day that never comes is refused', () => {
    // Refused, not read: read as minute-first, `0 0 9 * * *` would run at midnight on every day of September.
    expect(checkCron('0 0 9 * * *')).toEqual({ ok: false, reason: expect.stringMatching(/^expected 5 fields \(minute hour day-of-month month day-of-week\), got 6: a seconds field is not supported/) });
    expect(checkCron('0 0 9 * * ? 2027')).toEqual({ ok: false, reason: expect.stringContaining('got 7: seconds and year fields') });
    expect(checkCron('@reboot')).toEqual({ ok: false, reason: expect.stringContaining('"@reboot" is none of them') });
    // Refused naming both fields at odds, with their values as typed.
    expect(checkCron('0 0 30 2 *')).toEqual({ ok: false, reason: expect.stringMatching(/^never fires: no month the month field "2" names has the day of month "30" \(February has 29 days at most/) });
    expect(checkCron('0 0 31 4,6,9,11 *')).toEqual({ ok: false, reason: expect.stringContaining('month field "4,6,9,11" names has the day of month "31"') });
    expect(checkCron('0 0 31 FEB *')).toEqual({ ok: false, reason: expect.stringContaining('month field "FEB" names has the day of month "31"') });
    expect(checkCron('0 0 30 2 */2').ok).toBe(false);
    expect(checkCron('0 0 29 2 *')).toEqual({ ok: true });
  });
});

describe('instants in the first centuries', () => {
  it("a zone's wall clock is read in its own year, before 100 and before 1 AD too (Date.UTC reads 99 as 1999)", () => {
    const wall = (tz: string, iso: string) => new Date(zoneOf(tz).wallOf(new Date(iso).getTime())).toISOString();
    expect(wall('UTC', '0099-06-30T12:00:00Z')).toBe('0099-06-30T12:00:00.000Z');
    expect(wall('UTC', '0000-02-29T00:00:00Z')).toBe('0000-02-29T00:00:00.000Z');
    expect(wall('America/New_York', '0001-01-01T00:00:00Z')).toBe('0000-12-31T19:03:00.000Z');
  });

  it('the latest fire time at or before one is found at once (it walked back hour by hour through the centuries)', { timeout: 10_000 }, () => {
    expect(latestFireAtOrBefore('0 * * * *', 'UTC', new Date('0001-01-01T00:30:00Z'))?.toISOString()).toBe('0001-01-01T00:00:00.000Z');
    expect(latestFireAtOrBefore('0 * * * *', 'Asia/Kathmandu', new Date('0099-06-30T12:00:00Z'))).toBeDefined();
  });
});

describe('W: the weekday nearest a day, within its month (Quartz), which cron-parser does not read', () => {
  it('15W, 1W and LW: a Saturday moves to Friday, a Sunday to Monday, never across the month', () => {
    // 2028: 15 Jan a Saturday (the 14th), 1 Jan and 1 Apr Saturdays (Monday the 3rd), 30 Apr a Sunday (Friday the 28th).
    expect(days('0 18 15W * *', 'UTC', '2028-01-01T00:00:00Z', 4)).toEqual(['2028-01-14T18:00', '2028-02-15T18:00', '2028-03-15T18:00', '2028-04-14T18:00']);
    expect(days('0 18 1W * *', 'UTC', '2027-12-31T00:00:00Z', 4)).toEqual(['2028-01-03T18:00', '2028-02-01T18:00', '2028-03-01T18:00', '2028-04-03T18:00']);
    expect(days('0 18 LW * *', 'Europe/Berlin', '2028-01-01T00:00:00Z', 4)).toEqual(['2028-01-31T17:00', '2028-02-29T17:00', '2028-03-31T16:00', '2028-04-28T16:00']);
    // 31W names only the months with a 31st; the month field narrows it as usual.
    expect(days('0 0 31W * *', 'UTC', '2028-04-01T00:00:00Z', 2)).toEqual(['2028-05-31T00:00', '2028-07-31T00:00']);
    expect(days('0 9 LW 2 *', 'UTC', '2028-01-01T00:00:00Z', 2)).toEqual(['2028-02-29T09:00', '2029-02-28T09:00']);
    expect(latestFireAtOrBefore('0 18 LW * *', 'UTC', new Date('2028-04-29T00:00:00Z'))).toEqual(new Date('2028-04-28T18:00:00Z'));
  });

  it('refused with the field named: in a list, with a day of week, out of range, never firing', () => {
    expect(checkCron('0 0 LW,15 * *')).toMatchObject({ ok: false, reason: expect.stringContaining('day of month "LW,15": W is read as one day only') });
    expect(checkCron('0 0 15W * 1-5')).toMatchObject({ ok: false, reason: expect.stringContaining('W already picks a weekday') });
    expect(checkCron('0 0 32W * *')).toMatchObject({ ok: false, reason: expect.stringContaining('"32W"') });
    expect(checkCron('0 0 30W 2 *')).toMatchObject({ ok: false, reason: expect.stringContaining('never fires') });
    expect(crontabCheck('0 18 LW * *')).toMatchObject({ ok: false });
  });
});

describe("what cron-parser refuses, in plain words naming the field and its value (never its 'Constraint error, got range NaN-2')", () => {
  const MINUTE = 'the minute reads 0-59, *, ranges (1-5), lists (1,3) and steps (*/15)';
  const DOM = 'the day of month reads 1-31, *, ranges (1-5), lists (1,3) and steps (*/15), and L (the last day), LW (the last weekday), 15W (the weekday nearest the 15th)';
  const DOW = 'the day of week reads 0-7 or names (SUN-SAT), *, ranges (1-5), lists (1,3) and steps (*/15), and 5L (the last Friday of the month), 1#2 (the second Monday); 0 and 7 are both Sunday';
  it.each([
    ['0 0 L-2 * *', `day of month "L-2": a day counted back from the last (L-2) is not supported; ${DOM}`],
    ['0 0 1-L * *', `day of month "1-L": L and W are read only as L, LW or a day with W (1-L is none), not in a range or with an offset; ${DOM}`],
    ['5/0 * * * *', `minute "5/0": a step of 0 ("5/0") never moves on; a step is 1 or more; ${MINUTE}`],
    ['*/0 * * * *', `minute "*/0": a step of 0 ("*/0") never moves on; a step is 1 or more; ${MINUTE}`],
    ['5/ * * * *', `minute "5/": the step after "/" must be a whole number, got ""; ${MINUTE}`],
    ['/5 * * * *', `minute "/5": nothing before "/": write "*/5" for every 5, or "M/5" from M on; ${MINUTE}`],
    ['60 * * * *', `minute "60": 60 is out of range; ${MINUTE}`],
    ['1-70 * * * *', `minute "1-70": 70 is out of range; ${MINUTE}`],
    ['5-1 * * * *', `minute "5-1": the range 5-1 runs backwards; a range goes from low to high (a range that wraps is two: 22-23,0-2); ${MINUTE}`],
    ['1,,2 * * * *', `minute "1,,2": an empty value in the list; ${MINUTE}`],
    ['a * * * *', `minute "a": "a" is not a number; ${MINUTE}`],
    ['0 24 * * *', 'hour "24": 24 is out of range; the hour reads 0-23, *, ranges (1-5), lists (1,3) and steps (*/15)'],
    ['0 0 0 * *', `day of month "0": 0 is out of range; ${DOM}`],
    ['0 0 * 13 *', 'month "13": 13 is out of range; the month reads 1-12 or names (JAN-DEC), *, ranges (1-5), lists (1,3) and steps (*/15)'],
    ['0 0 * * 8', `day of week "8": 8 is out of range; ${DOW}`],
    ['0 0 * * L', `day of week "L": L alone is not read in the day of week; "5L" is the last Friday of the month; ${DOW}`],
    ['0 0 * * 1#6', `day of week "1#6": the occurrence after # must be 1 to 5 ("1#2": the second Monday), got "6"; ${DOW}`],
    // A day no month named has is refused as never firing (cron-parser: "Invalid explicit day of month definition").
    ['* * 31 2 *', 'never fires: no month the month field "2" names has the day of month "31" (February has 29 days at most; April, June, September and November 30)'],
  ])('%s', (cron, reason) => {
    expect(checkCron(cron)).toEqual({ ok: false, reason });
  });

  it('what cron-parser reads is still read: L, LW, 15W, 5L, 1#2, names, ?, 7, */70', () => {
    for (const cron of ['0 0 L * *', '0 0 LW * *', '0 0 15W * *', '0 0 L,15 * *', '0 0 * * 5L', '0 0 * * 7L', '0 0 * * 1#2', '0 0 * JAN-MAR MON-FRI', '0 0 ? * *', '0 0 * * 7', '*/70 * * * *']) {
      expect(checkCron(cron)).toEqual({ ok: true });
    }
  });
});
