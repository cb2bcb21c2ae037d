import { describe, expect, it } from 'vitest';
import { heldSpanOf, MAINTENANCE_HORIZON_MS, MAINTENANCE_MAX_MS, maintenanceAt, newlyHeldMs, occurrenceAt, oneOffWindowProblem, recurrenceKey, recurringRules, type MaintenanceRule } from '../../src/domain/maintenance.js';

const H = 3_600_000;
const at = (iso: string) => new Date(iso);
const recurring = (cron: string, timezone: string, hours: number, scope: 'workflow' | 'tenant' = 'workflow', reason: string | null = null): MaintenanceRule => ({
  kind: 'recurring',
  cron,
  timezone,
  durationMs: hours * H,
  reason,
  scope,
});
const once = (from: string, to: string, scope: 'workflow' | 'tenant' = 'workflow', reason: string | null = null): MaintenanceRule => ({ kind: 'once', startsAt: at(from), endsAt: at(to), reason, scope });

describe('maintenanceAt: is this workflow in maintenance at t', () => {
  const cases: { name: string; rules: MaintenanceRule[]; t: string; window: { startsAt: string; endsAt: string } | null }[] = [
    { name: 'no rules', rules: [], t: '2026-03-10T02:00:00Z', window: null },
    { name: 'one-off: its first instant is inside', rules: [once('2026-03-10T02:00:00Z', '2026-03-10T04:00:00Z')], t: '2026-03-10T02:00:00Z', window: { startsAt: '2026-03-10T02:00:00Z', endsAt: '2026-03-10T04:00:00Z' } },
    { name: 'one-off: its end is outside (half-open)', rules: [once('2026-03-10T02:00:00Z', '2026-03-10T04:00:00Z')], t: '2026-03-10T04:00:00Z', window: null },
    { name: 'one-off: a minute before it starts', rules: [once('2026-03-10T02:00:00Z', '2026-03-10T04:00:00Z')], t: '2026-03-10T01:59:00Z', window: null },
    // Berlin is UTC+1 in winter: 02:00 local is 01:00 UTC.
    { name: 'recurring in a zone: 02:00 Berlin for 2 h, inside', rules: [recurring('0 2 * * *', 'Europe/Berlin', 2)], t: '2026-03-10T02:59:00Z', window: { startsAt: '2026-03-10T01:00:00Z', endsAt: '2026-03-10T03:00:00Z' } },
    { name: 'recurring in a zone: 02:00 UTC is 03:00 Berlin, still inside; 03:00 UTC is not', rules: [recurring('0 2 * * *', 'Europe/Berlin', 2)], t: '2026-03-10T03:00:00Z', window: null },
    { name: 'recurring: before the day\'s occurrence, yesterday\'s is long over', rules: [recurring('0 2 * * *', 'Europe/Berlin', 2)], t: '2026-03-10T00:30:00Z', window: null },
    // Spring forward in Berlin (29 March 2026, 02:00 CET → 03:00 CEST): 02:30 does not exist and opens at 03:30 CEST (01:30 UTC).
    { name: 'DST gap: a 02:30 window opens as late as the gap is long', rules: [recurring('30 2 * * *', 'Europe/Berlin', 1)], t: '2026-03-29T01:45:00Z', window: { startsAt: '2026-03-29T01:30:00Z', endsAt: '2026-03-29T02:30:00Z' } },
    { name: 'DST gap: not before it opens', rules: [recurring('30 2 * * *', 'Europe/Berlin', 1)], t: '2026-03-29T01:15:00Z', window: null },
    // Fall back (25 October 2026, 03:00 CEST → 02:00 CET): 02:30 happens twice; the window opens at the first, for 2 h of elapsed time.
    { name: 'DST fall-back: opens at the first 02:30 and lasts 2 real hours', rules: [recurring('30 2 * * *', 'Europe/Berlin', 2)], t: '2026-10-25T02:15:00Z', window: { startsAt: '2026-10-25T00:30:00Z', endsAt: '2026-10-25T02:30:00Z' } },
    { name: 'DST fall-back: the second 02:30 does not open another window', rules: [recurring('30 2 * * *', 'Europe/Berlin', 2)], t: '2026-10-25T02:30:00Z', window: null },
    { name: 'weekly in New York across its own DST change (Sunday 01:00 EDT)', rules: [recurring('0 1 * * 0', 'America/New_York', 3)], t: '2026-03-08T07:00:00Z', window: { startsAt: '2026-03-08T06:00:00Z', endsAt: '2026-03-08T09:00:00Z' } },
    { name: 'longer than its cadence: hourly for 90 min is always in force', rules: [recurring('0 * * * *', 'UTC', 1.5)], t: '2026-03-10T05:59:00Z', window: { startsAt: '2026-03-10T05:00:00Z', endsAt: '2026-03-10T06:30:00Z' } },
    {
      name: 'overlapping: the window that ends last wins',
      rules: [once('2026-03-10T02:00:00Z', '2026-03-10T03:00:00Z'), recurring('30 2 * * *', 'UTC', 2, 'tenant'), once('2026-03-10T01:00:00Z', '2026-03-10T02:45:00Z')],
      t: '2026-03-10T02:40:00Z',
      window: { startsAt: '2026-03-10T02:30:00Z', endsAt: '2026-03-10T04:30:00Z' },
    },
    {
      name: 'overlapping: after one ends, the other still holds',
      rules: [once('2026-03-10T02:00:00Z', '2026-03-10T03:00:00Z'), once('2026-03-10T02:30:00Z', '2026-03-10T05:00:00Z')],
      t: '2026-03-10T04:00:00Z',
      window: { startsAt: '2026-03-10T02:30:00Z', endsAt: '2026-03-10T05:00:00Z' },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const w = maintenanceAt(c.rules, at(c.t));
      if (c.window === null) expect(w).toBeNull();
      else expect(w && { startsAt: w.startsAt.toISOString(), endsAt: w.endsAt.toISOString() }).toEqual({ startsAt: at(c.window.startsAt).toISOString(), endsAt: at(c.window.endsAt).toISOString() });
    });
  }

  it('on a tie the workflow\'s own window is the one told, and a recurring one names its rule', () => {
    const tenant = once('2026-03-10T02:00:00Z', '2026-03-10T04:00:00Z', 'tenant', 'tenant-wide');
    const own = recurring('0 2 * * *', 'UTC', 2, 'workflow', 'vacuum');
    expect(maintenanceAt([tenant, own], at('2026-03-10T03:00:00Z'))).toMatchObject({ scope: 'workflow', reason: 'vacuum', recurrence: '0 2 * * *|UTC|7200000' });
    expect(maintenanceAt([own, tenant], at('2026-03-10T03:00:00Z'))).toMatchObject({ scope: 'workflow' });
    expect(maintenanceAt([tenant], at('2026-03-10T03:00:00Z'))).toMatchObject({ scope: 'tenant', recurrence: null, reason: 'tenant-wide' });
  });

  it('occurrenceAt and recurrenceKey agree on the rule', () => {
    const rule = recurring('0 2 * * *', 'UTC', 1) as Extract<MaintenanceRule, { kind: 'recurring' }>;
    expect(occurrenceAt(rule, at('2026-03-10T02:30:00Z'))?.recurrence).toBe(recurrenceKey(rule));
  });
});

describe('recurringRules: stored rules read defensively', () => {
  it('keeps well-formed entries and drops the rest', () => {
    const stored = [
      { cron: '0 2 * * *', timezone: 'UTC', durationMs: H, reason: 'backup' },
      { cron: '0 3 * * *', timezone: 'UTC', durationMs: 0 },
      { cron: 5, timezone: 'UTC', durationMs: H },
      null,
    ];
    expect(recurringRules(stored, 'tenant')).toEqual([{ kind: 'recurring', cron: '0 2 * * *', timezone: 'UTC', durationMs: H, reason: 'backup', scope: 'tenant' }]);
    expect(recurringRules('nonsense', 'workflow')).toEqual([]);
  });
});

describe('newlyHeldMs: overlapping windows hold an escalation deadline for their union, once', () => {
  const span = (from: string, to: string) => ({ startsAt: at(`2026-03-10T${from}:00Z`), endsAt: at(`2026-03-10T${to}:00Z`) });
  const OPENED = at('2026-03-10T00:00:00Z');
  const cases: { name: string; window: [string, string]; earlier: [string, string][]; from?: string; hours: number }[] = [
    { name: 'alone: the whole window', window: ['10:00', '12:00'], earlier: [], hours: 2 },
    { name: 'an earlier window that does not touch it changes nothing', window: ['10:00', '12:00'], earlier: [['07:00', '09:00']], hours: 2 },
    { name: 'back to back (half-open): nothing shared', window: ['10:00', '12:00'], earlier: [['08:00', '10:00']], hours: 2 },
    { name: 'tenant 10-12 then workflow 11-13: only 12-13 is new', window: ['11:00', '13:00'], earlier: [['10:00', '12:00']], hours: 1 },
    { name: 'a window inside one already told: nothing new', window: ['10:30', '11:30'], earlier: [['10:00', '12:00']], hours: 0 },
    { name: 'a window around an earlier one: only its own edges', window: ['09:00', '13:00'], earlier: [['10:00', '11:00']], hours: 3 },
    { name: 'the same window twice (file and API): once', window: ['10:00', '12:00'], earlier: [['10:00', '12:00']], hours: 0 },
    { name: 'two earlier windows overlapping each other: their union is subtracted once', window: ['09:00', '14:00'], earlier: [['08:00', '10:00'], ['09:30', '11:00'], ['12:00', '13:00']], hours: 2 },
    { name: 'opened inside the window: held from the opening', window: ['10:00', '12:00'], earlier: [], from: '11:00', hours: 1 },
    { name: 'opened inside an earlier window: what it held before the opening is not subtracted', window: ['10:00', '14:00'], earlier: [['09:00', '12:00']], from: '11:00', hours: 2 },
    { name: 'opened after the window: nothing', window: ['10:00', '12:00'], earlier: [], from: '12:30', hours: 0 },
  ];
  it.each(cases)('$name', ({ window, earlier, from, hours }) => {
    expect(newlyHeldMs(span(...window), earlier.map((e) => span(...e)), from ? at(`2026-03-10T${from}:00Z`) : OPENED)).toBe(hours * H);
  });

  it('told one by one in end order, the moves add up to the union of the windows', () => {
    const windows = [span('10:00', '12:00'), span('11:00', '13:00'), span('12:30', '12:45'), span('15:00', '16:00'), span('08:00', '16:30')];
    const told = [...windows].sort((a, b) => a.endsAt.getTime() - b.endsAt.getTime());
    const total = told.reduce((sum, w, i) => sum + newlyHeldMs(w, told.slice(0, i), OPENED), 0);
    expect(total).toBe(8.5 * H); // 08:00–16:30
    const pair = [span('10:00', '12:00'), span('11:00', '13:00')];
    expect(pair.reduce((sum, w, i) => sum + newlyHeldMs(w, pair.slice(0, i), OPENED), 0)).toBe(3 * H); // 10:00–13:00, not 4 h
  });
});

describe('heldSpanOf: the time a recorded window held the escalation clock', () => {
  const row = (startsAt: string, createdAt: string, recurrence: string | null) => ({ startsAt: at(startsAt), endsAt: at('2026-03-10T04:00:00Z'), createdAt: at(createdAt), recurrence });
  it.each([
    ['a one-off window set before it starts: all of it', row('2026-03-10T02:00:00Z', '2026-03-10T01:00:00Z', null), '2026-03-10T02:00:00Z'],
    ['a one-off window set to start in the past: from when it was set', row('2026-03-10T02:00:00Z', '2026-03-10T03:00:00Z', null), '2026-03-10T03:00:00Z'],
    ['a recurring occurrence recorded after its start: from its start', row('2026-03-10T02:00:00Z', '2026-03-10T02:01:00Z', '0 2 * * *|UTC|7200000'), '2026-03-10T02:00:00Z'],
  ] as const)('%s', (_name, w, from) => {
    expect(heldSpanOf(w)).toEqual({ startsAt: at(from), endsAt: at('2026-03-10T04:00:00Z') });
  });
});


describe('oneOffWindowProblem: where a one-off window may start', () => {
  const now = at('2026-03-10T02:00:00Z');
  const cases: { name: string; startsAt: string; hours: number; problem: RegExp | undefined }[] = [
    { name: 'now', startsAt: '2026-03-10T02:00:00Z', hours: 1, problem: undefined },
    { name: 'begun an hour ago, still in force for an hour', startsAt: '2026-03-10T01:00:00Z', hours: 2, problem: undefined },
    { name: 'ended at this very instant (half-open)', startsAt: '2026-03-10T01:00:00Z', hours: 1, problem: /^the window would have ended already \(at 2026-03-10T02:00:00\.000Z\)/ },
    { name: 'the epoch', startsAt: '1970-01-01T00:00:00Z', hours: 168, problem: /ended already/ },
    { name: 'year 0', startsAt: '0000-01-01T00:00:00Z', hours: 1, problem: /ended already/ },
    { name: 'exactly 90 days ahead', startsAt: '2026-06-08T02:00:00Z', hours: 1, problem: undefined },
    { name: 'a millisecond past 90 days ahead', startsAt: '2026-06-08T02:00:00.001Z', hours: 1, problem: /^must be at most 90 days ahead \(by 2026-06-08T02:00:00\.000Z\)$/ },
    { name: 'year 9999', startsAt: '9999-12-31T00:00:00Z', hours: 1, problem: /at most 90 days ahead/ },
  ];
  it.each(cases)('$name', ({ startsAt, hours, problem }) => {
    const found = oneOffWindowProblem(at(startsAt), hours * H, now);
    if (problem) expect(found).toMatch(problem);
    else expect(found).toBeUndefined();
  });

  it('the horizon and the longest window are the documented 90 and 7 days', () => {
    expect(MAINTENANCE_HORIZON_MS).toBe(90 * 24 * H);
    expect(MAINTENANCE_MAX_MS).toBe(7 * 24 * H);
  });
});
