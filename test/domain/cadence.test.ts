import { describe, expect, it } from 'vitest';
import { derivePolicy, profileFor, typicalGapSeconds } from '../../src/domain/cadence.js';
import { fireTimesBetween } from '../../src/domain/schedule.js';

const AT = new Date('2026-03-10T00:00:00Z');

describe('cadence profiler', () => {
  it('holds the anchor rows of DESIGN.md exactly', () => {
    expect(profileFor('*/5 * * * *', 'UTC', {}, AT)).toMatchObject({ cadenceSeconds: 300, retries: 0, alertAfter: 3, firstSeverity: 'warning' });
    expect(profileFor('0 * * * *', 'UTC', {}, AT)).toMatchObject({ cadenceSeconds: 3600, retries: 2, alertAfter: 2, firstSeverity: 'warning' });
    expect(profileFor('0 2 * * *', 'UTC', {}, AT)).toMatchObject({ cadenceSeconds: 86_400, retries: 3, alertAfter: 1, firstSeverity: 'critical' });
    expect(profileFor('*/10 * * * *', 'UTC', {}, AT)).toMatchObject({ retries: 0, alertAfter: 3, firstSeverity: 'warning' });
  });

  it('reads an irregular cron by its typical gap: weekdays at 09:00 is daily', () => {
    expect(typicalGapSeconds('0 9 * * 1-5', 'Europe/Berlin', AT)).toBe(86_400);
    expect(profileFor('0 9 * * 1-5', 'Europe/Berlin', {}, AT)).toMatchObject({ retries: 3, alertAfter: 1, firstSeverity: 'critical' });
  });

  it('moves monotonically between the anchors: rarer → more retries, fewer failures, sooner escalation', () => {
    const gaps = [60, 300, 600, 900, 1200, 1800, 2700, 3600, 7200, 10_800, 21_600, 43_200, 86_400, 7 * 86_400];
    const policies = gaps.map(derivePolicy);
    for (let i = 1; i < policies.length; i++) {
      const [a, b] = [policies[i - 1]!, policies[i]!];
      expect(b.retries).toBeGreaterThanOrEqual(a.retries);
      expect(b.alertAfter).toBeLessThanOrEqual(a.alertAfter);
      expect(b.escalationMultiplier).toBeLessThanOrEqual(a.escalationMultiplier);
      expect(b.graceSeconds).toBeGreaterThanOrEqual(a.graceSeconds);
      expect(b.timeoutSeconds).toBeGreaterThanOrEqual(a.timeoutSeconds);
      if (a.firstSeverity === 'critical') expect(b.firstSeverity).toBe('critical');
    }
    expect(derivePolicy(1800)).toMatchObject({ retries: 1 });
  });

  it('lets overrides win field by field and shows derived beside effective', () => {
    const p = profileFor('0 * * * *', 'UTC', { alertAfter: 5, minRows: 100 }, AT);
    expect(p).toMatchObject({ alertAfter: 5, minRows: 100, retries: 2, firstSeverity: 'warning', escalateAfterFailures: 10 });
    expect(p.derived).toMatchObject({ alertAfter: 2, minRows: null });
    expect(p.overrides).toEqual({ alertAfter: 5, minRows: 100 });
  });

  it('reads the gaps on the wall clock: the same cadence whatever the date, across DST and month lengths', () => {
    for (const [cron, tz, gap] of [
      ['0 9,17 * * *', 'Europe/London', 43_200],
      ['0 0 1 * *', 'Europe/London', 31 * 86_400],
      ['0 8,20 * * *', 'America/New_York', 43_200],
    ] as const) {
      const seen = new Set<number>();
      for (let day = 0; day < 366; day += 3) seen.add(typicalGapSeconds(cron, tz, new Date(Date.UTC(2026, 0, 1) + day * 86_400_000)));
      expect([...seen], `${cron} ${tz}`).toEqual([gap]);
    }
  });

  it('gives the right fire times across DST and keeps a daily cadence on those nights', () => {
    // Spring forward in Berlin, 29 March 2026: 02:30 local does not exist; the job runs at 03:30 local (01:30 UTC).
    const spring = fireTimesBetween('30 2 * * *', 'Europe/Berlin', new Date('2026-03-27T12:00:00Z'), new Date('2026-03-30T12:00:00Z'));
    expect(spring.map((d) => d.toISOString())).toEqual(['2026-03-28T01:30:00.000Z', '2026-03-29T01:30:00.000Z', '2026-03-30T00:30:00.000Z']);
    // Fall back, 25 October 2026: 02:30 local happens twice; the job fires once.
    const fall = fireTimesBetween('30 2 * * *', 'Europe/Berlin', new Date('2026-10-24T12:00:00Z'), new Date('2026-10-26T12:00:00Z'));
    expect(fall).toHaveLength(2);
    expect(fall[0]!.toISOString()).toBe('2026-10-25T00:30:00.000Z');
    expect(profileFor('30 2 * * *', 'Europe/Berlin', {}, new Date('2026-03-28T00:00:00Z')).cadenceSeconds).toBe(86_400);
    // An hourly job across the fall-back night: still hourly.
    expect(profileFor('0 * * * *', 'Europe/Berlin', {}, new Date('2026-10-24T22:00:00Z')).cadenceSeconds).toBe(3600);
  });
});
