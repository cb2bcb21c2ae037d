import { describe, expect, it } from 'vitest';
import { cadenceInWords, compactDuration, formatDuration, parseDuration, readDuration, relativeTime, utcText, zoneRangeText, zoneText } from '../../src/domain/durations.js';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

describe('durations in words', () => {
  it.each([
    [0, '0 seconds'],
    [400, '0 seconds'],
    [1 * S, '1 second'],
    [45 * S, '45 seconds'],
    [90 * S, '1 minute 30 seconds'],
    [59 * M + 59.6 * S, '1 hour'],
    [H, '1 hour'],
    [7 * H + 2 * M + 10 * S, '7 hours 2 minutes'],
    [23 * H + 59 * M + 40 * S, '1 day'],
    [2 * D, '2 days'],
    [2 * D + 59 * M, '2 days 1 hour'],
    [9 * D + 4 * H, '9 days 4 hours'],
    [31 * D, '1 month'],
    [45 * D, '1 month 14 days'],
    [400 * D, '1 year 1 month'],
  ])('%d ms → %s', (ms, words) => {
    expect(formatDuration(ms)).toBe(words);
  });

  it('relative forms read as people say them', () => {
    const now = new Date('2026-03-10T09:05:00Z');
    expect(relativeTime(new Date(now.getTime() + 40 * M), now)).toBe('in 40 minutes');
    expect(relativeTime(new Date(now.getTime() - 3 * H), now)).toBe('3 hours ago');
    expect(relativeTime(now, now)).toBe('just now');
  });
});

describe('durations as Slack shows them (compact, DESIGN: "resolved after 7h 02m")', () => {
  it.each([
    [0, '0s'],
    [-5 * S, '0s'],
    [400, '0s'],
    [45 * S, '45s'],
    [59.6 * S, '1m'],
    [12 * M, '12m'],
    [2 * M + 5 * S, '2m 05s'],
    [59 * M + 59.6 * S, '1h'],
    [7 * H, '7h'],
    [7 * H + 2 * M + 10 * S, '7h 02m'],
    [7 * H + 2 * M + 40 * S, '7h 03m'],
    [23 * H + 59 * M + 40 * S, '1d'],
    [3 * D + 4 * H + 10 * M, '3d 4h'],
    [2 * D + 59 * M, '2d 1h'],
    [400 * D, '400d'],
  ])('%d ms → %s', (ms, text) => {
    expect(compactDuration(ms)).toBe(text);
  });
});

describe('the one duration parser (Slack, the workflows file, the replay)', () => {
  it.each([
    ['90s', 90 * S],
    ['30m', 30 * M],
    ['1h30m', 90 * M],
    ['4h', 4 * H],
    ['2d', 2 * D],
    ['1D', D],
    [' 1d12h ', 36 * H],
    ['365d', 365 * D],
  ])('%s → %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([
    ['99999d', /longer than 1 year/],
    ['366d', /longer than 1 year/],
    ['0m', /zero/],
    ['soon', /not a duration.*1h30m/],
    ['4 hours', /not a duration/],
    ['', /not a duration/],
    ['h', /not a duration/],
    ['-5m', /not a duration/],
    ['1.5h', /not a duration/],
  ])('%j is refused with a reason', (text, reason) => {
    const r = readDuration(text);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(reason);
    expect(parseDuration(text)).toBeUndefined();
  });
});

describe('zoneText and zoneRangeText', () => {
  it("show a time on the zone's wall clock and name the zone, across a DST change", () => {
    expect(zoneText(new Date('2026-03-10T08:00:00Z'), 'Europe/Berlin')).toBe('2026-03-10 09:00 Europe/Berlin');
    expect(zoneText(new Date('2026-07-10T08:00:00Z'), 'Europe/Berlin')).toBe('2026-07-10 10:00 Europe/Berlin');
    expect(zoneText(new Date('2026-03-10T08:00:00Z'), 'UTC')).toBe(utcText(new Date('2026-03-10T08:00:00Z')));
    expect(zoneText(new Date('2026-03-10T08:00:00Z'), 'Not/AZone')).toBe('2026-03-10 08:00 UTC');
  });

  it('leave out the second date of a span within one local day, not of one that crosses midnight there', () => {
    expect(zoneRangeText(new Date('2026-03-10T00:00:00Z'), new Date('2026-03-10T01:00:00Z'), 'Europe/Berlin')).toBe('2026-03-10 01:00 to 02:00 Europe/Berlin');
    expect(zoneRangeText(new Date('2026-03-09T22:30:00Z'), new Date('2026-03-09T23:30:00Z'), 'Europe/Berlin')).toBe('2026-03-09 23:30 to 2026-03-10 00:30 Europe/Berlin');
  });

  it('add the UTC offset to a time the fall-back night repeats, and only to it', () => {
    // 25 October 2026, Berlin: 03:00 CEST goes back to 02:00 CET at 01:00 UTC, so 02:00–02:59 happen twice.
    expect(zoneText(new Date('2026-10-25T00:30:00Z'), 'Europe/Berlin')).toBe('2026-10-25 02:30+02:00 Europe/Berlin');
    expect(zoneText(new Date('2026-10-25T01:30:00Z'), 'Europe/Berlin')).toBe('2026-10-25 02:30+01:00 Europe/Berlin');
    expect(zoneText(new Date('2026-10-24T23:59:00Z'), 'Europe/Berlin')).toBe('2026-10-25 01:59 Europe/Berlin');
    expect(zoneText(new Date('2026-10-25T02:00:00Z'), 'Europe/Berlin')).toBe('2026-10-25 03:00 Europe/Berlin');
    // Spring forward repeats nothing: 03:30 CEST on 29 March 2026 happens once.
    expect(zoneText(new Date('2026-03-29T01:30:00Z'), 'Europe/Berlin')).toBe('2026-03-29 03:30 Europe/Berlin');
    expect(zoneRangeText(new Date('2026-10-25T00:30:00Z'), new Date('2026-10-25T01:30:00Z'), 'Europe/Berlin')).toBe('2026-10-25 02:30+02:00 to 02:30+01:00 Europe/Berlin');
    expect(zoneRangeText(new Date('2026-10-24T23:00:00Z'), new Date('2026-10-25T01:15:00Z'), 'Europe/Berlin')).toBe('2026-10-25 01:00 to 02:15+01:00 Europe/Berlin');
  });
});

describe('cadenceInWords for calendar cadences', () => {
  // The typical gap of a calendar cron (src/domain/cadence.ts): months are mostly 31 days, years 365, leap days 4 years apart.
  it.each([
    { cron: '@monthly', seconds: 31 * 86_400, words: 'monthly' },
    { cron: '0 0 1 * * (a sample starting in February)', seconds: 30 * 86_400, words: 'monthly' },
    { cron: '0 0 31 * *', seconds: 61 * 86_400, words: 'every 2 months' },
    { cron: '0 0 1 */3 *', seconds: 7_905_600, words: 'every 3 months' },
    { cron: '@yearly', seconds: 365 * 86_400, words: 'yearly' },
    { cron: '0 0 29 2 *', seconds: 1461 * 86_400, words: 'every 4 years' },
    { cron: '0 0 * * 0', seconds: 7 * 86_400, words: 'weekly' },
    { cron: '0 0 */2 * *', seconds: 2 * 86_400, words: 'every 2 days' },
    { cron: '0 0 1,15 * *', seconds: 14 * 86_400, words: 'every 14 days' },
    { cron: '0 9 * * 1-5', seconds: 86_400, words: 'daily' },
  ])('$cron → $words', ({ seconds, words }) => {
    expect(cadenceInWords(seconds)).toBe(words);
  });
});
