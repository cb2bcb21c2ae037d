import { describe, expect, it } from 'vitest';
import { catchUpPlan, defaultCatchUpSeconds, missedTickError } from '../../src/domain/catch-up.js';
import { derivePolicy, profileFor } from '../../src/domain/cadence.js';

const d = (hhmm: string) => new Date(`2026-03-10T${hhmm}:00Z`);
const hhmm = (ts: Date[]) => ts.map((t) => t.toISOString().slice(11, 16));

describe('catchUpPlan', () => {
  it.each([
    // due ticks, now, window (s) → fired, coalesced (skipped), missed, late note
    [['02:00'], '02:00', 1800, '02:00', [], [], null],
    [['02:00'], '02:01', 1800, '02:00', [], [], null],
    [['02:00'], '02:30', 1800, '02:00', [], [], 'started 30m after its tick (catch-up window 30m)'],
    [['02:00'], '02:31', 1800, null, [], ['02:00'], null],
    [['00:00', '01:00', '02:00'], '02:10', 1800, '02:00', [], ['00:00', '01:00'], 'started 10m after its tick (catch-up window 30m)'],
    [['00:00', '01:00', '02:00'], '02:10', 86_400, '02:00', ['00:00', '01:00'], [], 'started 10m after its tick (catch-up window 1d)'],
    [['00:00', '01:00', '02:00'], '02:10', 5400, '02:00', ['01:00'], ['00:00'], 'started 10m after its tick (catch-up window 1h 30m)'],
    [['00:00', '01:00', '02:00'], '03:00', 600, null, [], ['00:00', '01:00', '02:00'], null],
  ] as const)('%o at %s with %is → fires %s', (due, now, window, fire, coalesced, missed, note) => {
    const plan = catchUpPlan(due.map(d), d(now), window);
    expect(plan.fire ? hhmm([plan.fire])[0] : null).toBe(fire);
    expect(hhmm(plan.coalesced)).toEqual(coalesced);
    expect(hhmm(plan.missed)).toEqual(missed);
    expect(plan.lateNote).toBe(note);
  });

  it('never launches more than one tick, however many fell due', () => {
    const due = Array.from({ length: 500 }, (_, i) => new Date(d('00:00').getTime() + i * 60_000));
    const plan = catchUpPlan(due, new Date(due.at(-1)!.getTime() + 10_000), 7 * 86_400);
    expect(plan.fire).toEqual(due.at(-1));
    expect(plan.coalesced).toHaveLength(499);
  });

  it('defaults to half the cadence, at least a minute and at most 6 h; a workflow may set its own', () => {
    expect([60, 300, 3600, 86_400, 7 * 86_400].map(defaultCatchUpSeconds)).toEqual([60, 150, 1800, 21_600, 21_600]);
    expect(derivePolicy(3600).catchUpSeconds).toBe(1800);
    expect(profileFor('0 2 * * *', 'Europe/Berlin', { catchUpSeconds: 600 }, d('00:00')).catchUpSeconds).toBe(600);
  });

  it('says when the tick was due by', () => {
    expect(missedTickError(d('02:00'), 1800)).toBe('missed: not fired by 2026-03-10T02:30:00.000Z (catch-up window 30m); no scheduler ran it in time');
  });
});
