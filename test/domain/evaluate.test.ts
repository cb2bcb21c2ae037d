import { describe, expect, it } from 'vitest';
import { escalateAtAfterPolicyChange, escalateAtFor, evaluateHistory, nextAlertState, type AlertStateFields, type Effect, type FailureFacts, type HistoryFacts, type OpenAlertFacts } from '../../src/domain/evaluate.js';

const NOW = new Date('2026-03-10T09:00:00Z');
const OPENED = new Date('2026-03-10T08:00:00Z');
const policy = { alertAfter: 2, recoverAfter: 1, firstSeverity: 'warning' as const, escalationMultiplier: 3 };

const failure = (runId: number, errorGroup = 'g1'): FailureFacts => ({ runId, error: 'connection refused', errorGroup, stage: null, status: 'failed', tick: null, logExcerpt: null, logUrl: null });
const facts = (f: Partial<HistoryFacts>): HistoryFacts => ({ failures: 0, healthyStreak: 0, newestFailure: null, newestSuccess: null, ...f });
const alert = (a: Partial<OpenAlertFacts> = {}): OpenAlertFacts => ({ id: 1, openedAt: OPENED, consecutiveFailures: 2, lastRunId: 10, errorGroup: 'g1', healthyStreak: 0, ...a });
const success = (runId: number, trigger = 'schedule') => ({ runId, trigger, tick: null });

/** The alert state transition: history facts and the open alert (or none) in, the effect out. */
describe('evaluateHistory: the alert state transition', () => {
  const cases: { name: string; facts: HistoryFacts; alert: OpenAlertFacts | null; recoverAfter?: number; paused?: boolean; expected: string[] }[] = [
    { name: 'paused, no alert, alertAfter failures: nothing opens', facts: facts({ failures: 5, newestFailure: failure(11) }), alert: null, paused: true, expected: [] },
    { name: 'paused, open alert, a new failure: still recorded on it', facts: facts({ failures: 3, newestFailure: failure(11) }), alert: alert(), paused: true, expected: ['failure_recorded'] },
    { name: 'paused, open alert, a success: still resolves (good news is not held back)', facts: facts({ healthyStreak: 1, newestSuccess: success(12) }), alert: alert(), paused: true, expected: ['resolve'] },
    { name: 'no alert, no failure: nothing', facts: facts({ healthyStreak: 3, newestSuccess: success(5) }), alert: null, expected: [] },
    { name: 'no alert, fewer failures than alertAfter: nothing yet', facts: facts({ failures: 1, newestFailure: failure(11) }), alert: null, expected: [] },
    { name: 'no alert, alertAfter failures: open', facts: facts({ failures: 2, newestFailure: failure(11) }), alert: null, expected: ['open'] },
    { name: 'no alert, failures counted but no failure row (all missed before history): nothing', facts: facts({ failures: 2 }), alert: null, expected: [] },
    { name: 'open alert, a new failure: failure recorded', facts: facts({ failures: 3, newestFailure: failure(11) }), alert: alert(), expected: ['failure_recorded'] },
    { name: 'open alert, an older tick\'s failure landing after the newest was recorded: failure recorded (the streak grew)', facts: facts({ failures: 3, newestFailure: failure(10) }), alert: alert(), expected: ['failure_recorded'] },
    { name: 'open alert, the same failure again: nothing', facts: facts({ failures: 2, newestFailure: failure(10) }), alert: alert(), expected: [] },
    { name: 'open alert, the same run with another error (a missed tick\'s late report failed): failure recorded', facts: facts({ failures: 2, newestFailure: failure(10, 'g2') }), alert: alert(), expected: ['failure_recorded'] },
    { name: 'open alert, a success: resolve', facts: facts({ healthyStreak: 1, newestSuccess: success(12) }), alert: alert(), expected: ['resolve'] },
    { name: 'open alert needing 3 successes, one so far: healthy streak', facts: facts({ healthyStreak: 1, newestSuccess: success(12) }), alert: alert(), recoverAfter: 3, expected: ['healthy_streak'] },
    { name: 'open alert, streak already recorded: nothing', facts: facts({ healthyStreak: 1, newestSuccess: success(12) }), alert: alert({ healthyStreak: 1 }), recoverAfter: 3, expected: [] },
    {
      name: 'alert opened by a cause, the failure below the threshold it knew of at opening: nothing',
      facts: facts({ failures: 1, newestFailure: failure(9) }),
      alert: alert({ consecutiveFailures: 0, lastRunId: null, errorGroup: null, knownFailureRunId: 9 }),
      expected: [],
    },
    {
      name: 'alert opened by a cause, a failure after the one it knew of: failure recorded',
      facts: facts({ failures: 2, newestFailure: failure(11) }),
      alert: alert({ consecutiveFailures: 0, lastRunId: null, errorGroup: null, knownFailureRunId: 9 }),
      expected: ['failure_recorded'],
    },
    {
      name: 'alert opened by a cause on a healthy workflow, the success from before it is still the newest: nothing',
      facts: facts({ healthyStreak: 4, newestSuccess: success(8) }),
      alert: alert({ consecutiveFailures: 0, lastRunId: null, errorGroup: null, knownSuccessRunId: 8 }),
      expected: [],
    },
    {
      name: 'alert opened by a cause on a healthy workflow, a success after it: resolve',
      facts: facts({ healthyStreak: 5, newestSuccess: success(12) }),
      alert: alert({ consecutiveFailures: 0, lastRunId: null, errorGroup: null, knownSuccessRunId: 8 }),
      expected: ['resolve'],
    },
    { name: 'open alert, a failure after a streak (same run as recorded): streak reset', facts: facts({ failures: 2, newestFailure: failure(10) }), alert: alert({ healthyStreak: 2 }), recoverAfter: 3, expected: ['streak_reset'] },
  ];

  it.each(cases)('$name', ({ facts: f, alert: a, recoverAfter, paused, expected }) => {
    const effects = evaluateHistory({ facts: f, alert: a, policy: { ...policy, recoverAfter: recoverAfter ?? policy.recoverAfter }, cadenceSeconds: 3600, paused, now: NOW });
    expect(effects.map((e) => e.type)).toEqual(expected);
  });

  it('opens with the first severity, the failure count and the escalation deadline', () => {
    const [open] = evaluateHistory({ facts: facts({ failures: 2, newestFailure: failure(11) }), alert: null, policy, cadenceSeconds: 3600, now: NOW });
    expect(open).toEqual({ type: 'open', severity: 'warning', failures: 2, failure: failure(11), escalateAt: new Date(NOW.getTime() + 3 * 3600_000) });
    const [critical] = evaluateHistory({ facts: facts({ failures: 2, newestFailure: failure(11) }), alert: null, policy: { ...policy, firstSeverity: 'critical' }, cadenceSeconds: 3600, now: NOW });
    expect(critical).toMatchObject({ type: 'open', severity: 'critical', escalateAt: null });
  });

  describe('failing intermittently (a flapping workflow below alertAfter failures in a row)', () => {
    const alternating = (newest: 'failure' | 'success', n = 10) => Array.from({ length: n }, (_, i) => ((i % 2 === 0) === (newest === 'failure') ? 'failure' : 'success') as 'failure' | 'success');
    const p3 = { ...policy, alertAfter: 3, recoverAfter: 1 };

    it('opens at the first severity, the failure count in a row kept, marked intermittent with the counts and the successes it needs', () => {
      const [effect] = evaluateHistory({ facts: facts({ failures: 1, newestFailure: failure(11), recentOutcomes: alternating('failure') }), alert: null, policy: p3, cadenceSeconds: 300, now: NOW });
      expect(effect).toEqual({
        type: 'open',
        severity: 'warning',
        failures: 1,
        failure: failure(11),
        escalateAt: escalateAtFor(NOW, 'warning', 3, 300),
        intermittent: { failures: 5, window: 10, transitions: 9, recoverAfter: 3 },
      });
    });

    it.each([
      { name: 'the newest outcome a success (no failure now): nothing', f: facts({ healthyStreak: 1, newestSuccess: success(12), recentOutcomes: alternating('success') }), paused: false },
      { name: 'four failures in the window: nothing yet', f: facts({ failures: 1, newestFailure: failure(11), recentOutcomes: alternating('failure', 8) }), paused: false },
      { name: 'paused: nothing opens', f: facts({ failures: 1, newestFailure: failure(11), recentOutcomes: alternating('failure') }), paused: true },
    ])('$name', ({ f, paused }) => {
      expect(evaluateHistory({ facts: f, alert: null, policy: p3, cadenceSeconds: 300, paused, now: NOW })).toEqual([]);
    });

    it('a policy with a high alertAfter keeps control: 5 of 10 opens nothing under alertAfter 6', () => {
      expect(evaluateHistory({ facts: facts({ failures: 1, newestFailure: failure(11), recentOutcomes: alternating('failure') }), alert: null, policy: { ...p3, alertAfter: 6 }, cadenceSeconds: 300, now: NOW })).toEqual([]);
    });

    it('alertAfter failures in a row open as usual, not marked intermittent even when flapping', () => {
      const [effect] = evaluateHistory({ facts: facts({ failures: 3, newestFailure: failure(11), recentOutcomes: ['failure', 'failure', 'failure', 'success', 'failure', 'success', 'failure', 'success'] }), alert: null, policy: p3, cadenceSeconds: 300, now: NOW });
      expect(effect).toMatchObject({ type: 'open', failures: 3 });
      expect(effect).not.toHaveProperty('intermittent');
    });

    it('a policy asking for more successes than the flapping minimum: the opening says that many', () => {
      const [effect] = evaluateHistory({ facts: facts({ failures: 1, newestFailure: failure(11), recentOutcomes: alternating('failure') }), alert: null, policy: { ...p3, recoverAfter: 4 }, cadenceSeconds: 300, now: NOW });
      expect(effect).toMatchObject({ intermittent: { recoverAfter: 4 } });
    });
  });

  it('a failure of another error group says which group it left', () => {
    const [recorded] = evaluateHistory({ facts: facts({ failures: 3, newestFailure: failure(11, 'g2') }), alert: alert(), policy, cadenceSeconds: 3600, now: NOW });
    expect(recorded).toMatchObject({ type: 'failure_recorded', failures: 3, groupChanged: { from: 'g1', to: 'g2' } });
  });

  it('going back to a group the alert has carried changes its group but is no new group', () => {
    const [back] = evaluateHistory({ facts: facts({ failures: 4, newestFailure: failure(12, 'g1') }), alert: alert({ errorGroup: 'g2', seenGroups: ['g1', 'g2'] }), policy, cadenceSeconds: 3600, now: NOW });
    expect(back).toMatchObject({ type: 'failure_recorded', groupChanged: { from: 'g2', to: 'g1', seenBefore: true } });
    const [fresh] = evaluateHistory({ facts: facts({ failures: 4, newestFailure: failure(12, 'g3') }), alert: alert({ errorGroup: 'g2', seenGroups: ['g1', 'g2'] }), policy, cadenceSeconds: 3600, now: NOW });
    expect(fresh).toMatchObject({ type: 'failure_recorded', groupChanged: { from: 'g2', to: 'g3' } });
    expect(fresh).not.toMatchObject({ groupChanged: { seenBefore: true } });
  });

  it('the first failure of an alert opened by a cause (no error yet) is no change of error group', () => {
    const [recorded] = evaluateHistory({ facts: facts({ failures: 1, newestFailure: failure(11, 'g2') }), alert: alert({ consecutiveFailures: 0, lastRunId: null, errorGroup: null }), policy, cadenceSeconds: 3600, now: NOW });
    expect(recorded).toMatchObject({ type: 'failure_recorded', failures: 1, groupChanged: null });
  });

  it('resolving says how long the alert was open and which run closed it', () => {
    const [resolve] = evaluateHistory({ facts: facts({ healthyStreak: 1, newestSuccess: success(12, 'manual') }), alert: alert(), policy, cadenceSeconds: 3600, now: NOW });
    expect(resolve).toEqual({ type: 'resolve', runId: 12, trigger: 'manual', durationSeconds: 3600, successes: 1, recoverAfter: 1 });
  });
});

describe('escalateAtFor', () => {
  it.each([
    // severity, multiplier, cadence seconds, schedule, expected deadline (null: no escalation)
    ['critical', 3, 3600, undefined, null],
    ['warning', 3, 3600, undefined, '2026-03-10T11:00:00.000Z'],
    ['warning', 2, 300, undefined, '2026-03-10T08:10:00.000Z'],
    // A weekday job's warning opened on Friday: the weekend is rest, the deadline moves to Monday.
    ['warning', 1, 86_400, { cron: '0 8 * * 1-5', timezone: 'UTC' }, '2026-03-16T08:00:00.000Z'],
  ] as const)('%s × %d of %d s (schedule %o): %s', (severity, multiplier, cadence, schedule, expected) => {
    const openedAt = schedule ? new Date('2026-03-13T08:00:00Z') : OPENED;
    const at = escalateAtFor(openedAt, severity, multiplier, cadence, schedule);
    expect(at?.toISOString() ?? null).toBe(expected);
  });

  it.each([
    // Opened on Saturday, inside the weekend: the clock starts when the schedule resumes, Monday 08:00, and runs a day.
    ['2026-03-14T12:00:00Z', 1, 86_400, '0 8 * * 1-5', '2026-03-17T08:00:00.000Z'],
    // Opened on Friday 4 minutes after the tick: Friday's day counts, the weekend does not, Monday 08:04.
    ['2026-03-13T08:04:00Z', 1, 86_400, '0 8 * * 1-5', '2026-03-16T08:04:00.000Z'],
    // A job every 5 minutes on 1 January only, its failure told in December: 3 ticks into next 1 January, not years on.
    ['2026-12-01T03:50:00Z', 3, 300, '*/5 * 1 1 *', '2027-01-01T00:15:00.000Z'],
  ] as const)('opened during a rest at %s (× %d of %d s, %s): %s', (opened, multiplier, cadence, cron, expected) => {
    expect(escalateAtFor(new Date(opened), 'warning', multiplier, cadence, { cron, timezone: 'UTC' })?.toISOString()).toBe(expected);
  });
});

describe('escalateAtAfterPolicyChange', () => {
  const opened = new Date('2026-03-10T02:02:00Z');
  const hour = 3_600_000;
  // Opened with multiplier 3 on an hourly cadence (05:02), then paused an hour (06:02).
  const held = new Date(opened.getTime() + 4 * hour);
  it('keeps a held deadline when the multiplier stays, and moves it by the difference when it changes', () => {
    expect(escalateAtAfterPolicyChange(held, opened, 3, 3, 3600)).toEqual(held);
    expect(escalateAtAfterPolicyChange(held, opened, 3, 5, 3600)).toEqual(new Date(held.getTime() + 2 * hour));
    expect(escalateAtAfterPolicyChange(held, opened, 3, 1, 3600)).toEqual(new Date(held.getTime() - 2 * hour));
    expect(escalateAtAfterPolicyChange(null, opened, 3, 5, 3600)).toBeNull();
    expect(escalateAtAfterPolicyChange(held, opened, undefined, 5, 3600)).toEqual(new Date(opened.getTime() + 5 * hour));
  });
});

describe('nextAlertState: the open alert after an evaluation', () => {
  const before: AlertStateFields = {
    status: 'open',
    consecutiveFailures: 2,
    lastError: 'connection refused',
    stage: null,
    lastRunId: 10,
    healthyStreak: 1,
    errorGroup: 'g1',
    errorGroupFirstAt: OPENED,
    errorGroupLastAt: OPENED,
    errorGroupCount: 2,
    resolvedAt: null,
    resolvedByRunId: null,
    flappingSince: null,
    updatedAt: OPENED,
  };
  const recorded = (runId: number, group: string, changed: boolean): Effect => ({
    type: 'failure_recorded',
    failures: 3,
    failure: { ...failure(runId, group), error: 'timeout', stage: 'load' },
    groupChanged: changed ? { from: 'g1', to: group } : null,
  });
  const flapping: Effect = { type: 'flapping', transitions: 5, window: 10, recoverAfter: 3 };
  it.each<[string, Effect[], Partial<AlertStateFields>]>([
    ['nothing happened: unchanged', [], {}],
    ['a failure of the same group: counted, streak reset, group seen again', [recorded(11, 'g1', false)], { consecutiveFailures: 3, lastError: 'timeout', stage: 'load', lastRunId: 11, healthyStreak: 0, errorGroupLastAt: NOW, errorGroupCount: 3, updatedAt: NOW }],
    ['a failure of a new group: the group starts over', [recorded(11, 'g2', true)], { consecutiveFailures: 3, lastError: 'timeout', stage: 'load', lastRunId: 11, healthyStreak: 0, errorGroup: 'g2', errorGroupFirstAt: NOW, errorGroupLastAt: NOW, errorGroupCount: 1, updatedAt: NOW }],
    ['a healthy streak: recorded', [{ type: 'healthy_streak', streak: 2, of: 3 }], { healthyStreak: 2, updatedAt: NOW }],
    ['a streak reset: back to zero', [{ type: 'streak_reset' }], { healthyStreak: 0, updatedAt: NOW }],
    ['resolve: resolved by the run, streak cleared', [{ type: 'resolve', runId: 12, trigger: 'schedule', durationSeconds: 3600, successes: 1, recoverAfter: 1 }], { status: 'resolved', resolvedAt: NOW, resolvedByRunId: 12, healthyStreak: 0, updatedAt: NOW }],
    ['flapping alone: marked flapping since now', [flapping], { flappingSince: NOW, updatedAt: NOW }],
    ['a streak and flapping: both', [{ type: 'healthy_streak', streak: 2, of: 3 }, flapping], { healthyStreak: 2, flappingSince: NOW, updatedAt: NOW }],
  ])('%s', (_case, effects, changed) => {
    expect(nextAlertState(before, effects, NOW)).toEqual({ ...before, ...changed });
  });

  it('the first failure of an alert opened by a cause (no error yet): its group starts there', () => {
    const cause = { ...before, consecutiveFailures: 0, lastError: null, lastRunId: null, healthyStreak: 0, errorGroup: null, errorGroupCount: 1 };
    const first: Effect = { type: 'failure_recorded', failures: 1, failure: { ...failure(11, 'g2'), error: 'timeout', stage: 'load' }, groupChanged: null };
    expect(nextAlertState(cause, [first], NOW)).toEqual({
      ...cause,
      ...{ consecutiveFailures: 1, lastError: 'timeout', stage: 'load', lastRunId: 11, errorGroup: 'g2', errorGroupFirstAt: NOW, errorGroupLastAt: NOW, errorGroupCount: 1, updatedAt: NOW },
    });
  });

  it('keeps the columns it does not decide (the caller passes the whole row)', () => {
    const row = { ...before, id: 7, ownerUser: 'U0ALICE' };
    expect(nextAlertState(row, [{ type: 'streak_reset' }], NOW)).toMatchObject({ id: 7, ownerUser: 'U0ALICE', healthyStreak: 0 });
  });
});
