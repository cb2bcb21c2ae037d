import { describe, expect, it } from 'vitest';
import { canonicalTimeZone } from '../../src/domain/time-zone.js';

describe('canonicalTimeZone', () => {
  it.each([
    { typed: 'Europe/Berlin', expected: 'Europe/Berlin' },
    { typed: 'europe/berlin', expected: 'Europe/Berlin' },
    { typed: 'EUROPE/BERLIN', expected: 'Europe/Berlin' },
    { typed: 'america/port-au-prince', expected: 'America/Port-au-Prince' },
    { typed: 'antarctica/dumontdurville', expected: 'Antarctica/DumontDUrville' },
    { typed: 'etc/gmt+5', expected: 'Etc/GMT+5' },
    { typed: 'utc', expected: 'UTC' },
    { typed: 'Etc/UTC', expected: 'UTC' },
    // An alias is stored as the zone it names, by its tzdb name (a backward link such as US/Pacific may be missing from a system's zoneinfo).
    { typed: 'US/Pacific', expected: 'America/Los_Angeles' },
    { typed: 'us/pacific', expected: 'America/Los_Angeles' },
    // The tzdb's current names, never the older ones Intl (CLDR) resolves them to.
    { typed: 'Asia/Kolkata', expected: 'Asia/Kolkata' },
    { typed: 'asia/calcutta', expected: 'Asia/Kolkata' },
    { typed: 'Europe/Kyiv', expected: 'Europe/Kyiv' },
    { typed: 'europe/kiev', expected: 'Europe/Kyiv' },
    { typed: 'America/Argentina/Buenos_Aires', expected: 'America/Argentina/Buenos_Aires' },
    { typed: 'Asia/Ho_Chi_Minh', expected: 'Asia/Ho_Chi_Minh' },
  ])('$typed → $expected', ({ typed, expected }) => {
    expect(canonicalTimeZone(typed)).toBe(expected);
  });
  it.each(['', 'Europe/Atlantis', 'not a zone', '+01:00'])('%j is not a time zone', (typed) => {
    expect(canonicalTimeZone(typed)).toBeUndefined();
  });
});
