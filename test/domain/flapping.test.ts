import { describe, expect, it } from 'vitest';
import { profileFor } from '../../src/domain/cadence.js';
import { evaluateHistory, type Effect, type OpenAlertFacts } from '../../src/domain/evaluate.js';
import { countTransitions, effectiveRecoverAfter, failingIntermittently, intermittentRuleOf, intermittentThreshold, isFlapping, type TickOutcome } from '../../src/domain/flapping.js';

/** Newest first: 'F' a failure, 'S' a success. */
const outcomes = (s: string): TickOutcome[] => [...s].map((c) => (c === 'F' ? 'failure' : 'success'));

describe('flapping', () => {
  it('counts the changes among the newest ten outcomes only', () => {
    expect(countTransitions(outcomes('FSFS'))).toBe(3);
    expect(countTransitions(outcomes('FFFFFFFFFFSFSFS'))).toBe(0);
    expect(isFlapping(3)).toBe(true);
    expect(isFlapping(2)).toBe(false);
  });
});

/** The rule that opens an alert for a job failing half its runs that never fails `alertAfter` in a row. */
describe('failingIntermittently', () => {
  it('needs half the window, or alertAfter when a policy asks for more', () => {
    expect(intermittentThreshold(1)).toBe(5);
    expect(intermittentThreshold(3)).toBe(5);
    expect(intermittentThreshold(7)).toBe(7);
  });

  it.each([
    { name: 'alternating, ten outcomes, newest a failure: 5 of 10', s: 'FSFSFSFSFS', alertAfter: 3, expected: { failures: 5, window: 10, transitions: 9 } },
    { name: 'alternating, only nine outcomes so far: 5 of 9', s: 'FSFSFSFSF', alertAfter: 3, expected: { failures: 5, window: 9, transitions: 8 } },
    { name: 'older outcomes beyond the window do not count', s: 'FSFSFSFSSSFFFFF', alertAfter: 3, expected: null },
    { name: 'alternating, newest a success: not now (the next failure tells)', s: 'SFSFSFSFSF', alertAfter: 3, expected: null },
    { name: 'alternating but only four failures in the window: not yet', s: 'FSFSFSFSSS', alertAfter: 3, expected: null },
    { name: 'mostly failing, but not flapping (two changes): the count in a row decides', s: 'FFFFFFSFFF', alertAfter: 12, expected: null },
    { name: 'a policy asking for 7 failures keeps control: 5 of 10 opens nothing', s: 'FSFSFSFSFS', alertAfter: 7, expected: null },
    { name: 'a policy asking for 7: 7 of 10 flapping opens', s: 'FFSFFSFFSF', alertAfter: 7, expected: { failures: 7, window: 10, transitions: 6 } },
    { name: 'no outcomes: nothing', s: '', alertAfter: 3, expected: null },
  ])('$name', ({ s, alertAfter, expected }) => {
    expect(failingIntermittently(outcomes(s), alertAfter)).toEqual(expected);
  });
});

/** What `/scheduler status` says of the rule: said exactly where some history could open an alert by it before `alertAfter` in a row does. */
describe('intermittentRuleOf', () => {
  it('names the threshold of the last ten runs, or nothing where the rule cannot act', () => {
    expect(intermittentRuleOf(1)).toBeNull();
    expect(intermittentRuleOf(3)).toEqual({ failures: 5, window: 10 });
    expect(intermittentRuleOf(8)).toEqual({ failures: 8, window: 10 });
    expect(intermittentRuleOf(9)).toBeNull();
  });

  it('agrees with the rule itself over every ten-run history', () => {
    const histories = Array.from({ length: 1 << 10 }, (_, bits) => outcomes([...Array(10)].map((_, i) => ((bits >> i) & 1 ? 'F' : 'S')).join('')));
    for (let alertAfter = 1; alertAfter <= 12; alertAfter++) {
      const inARow = (h: TickOutcome[]) => (h.findIndex((o) => o === 'success') + 11) % 11 || 10;
      const opensEarly = histories.some((h) => inARow(h) < alertAfter && failingIntermittently(h, alertAfter) !== null);
      expect({ alertAfter, said: intermittentRuleOf(alertAfter) !== null }).toEqual({ alertAfter, said: opensEarly });
    }
  });
});

/**
 * A very frequent job failing part of its runs at random: three successes in a row come every few minutes, so a
 * flapping alert that resolved on them reopened as failing intermittently minutes later (an every-minute job failing
 * half its runs opened 83 alerts a day). While it flaps, the successes that resolve it must also span a quarter hour.
 */
describe('a flapping every-minute job failing at random', () => {
  function next(alert: OpenAlertFacts, effect: Effect, runId: number): OpenAlertFacts {
    if (effect.type === 'failure_recorded') return { ...alert, consecutiveFailures: effect.failures, lastRunId: runId, healthyStreak: 0 };
    if (effect.type === 'healthy_streak') return { ...alert, healthyStreak: effect.streak };
    if (effect.type === 'streak_reset') return { ...alert, healthyStreak: 0 };
    if (effect.type === 'flapping') return { ...alert, flappingSince: new Date() };
    return alert;
  }

  function alertsInADay(cron: string, failureRate: number, ticks: number): number {
    const policy = profileFor(cron, 'UTC', {}, new Date('2026-03-10T00:00:00Z'));
    let seed = 42;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
    const history: TickOutcome[] = [];
    let alert: OpenAlertFacts | null = null;
    let opened = 0;
    for (let i = 0; i < ticks; i++) {
      history.unshift(random() < failureRate ? 'failure' : 'success');
      const inARow = (o: TickOutcome) => history.findIndex((h) => h !== o) === -1 ? history.length : history.findIndex((h) => h !== o);
      const failures = inARow('failure');
      const failure = { runId: i, error: 'boom', errorGroup: 'g', stage: null, status: 'failed' as const, tick: null, logExcerpt: null, logUrl: null };
      const facts = { failures, healthyStreak: inARow('success'), newestFailure: failures ? failure : null, newestSuccess: failures ? null : { runId: i, trigger: 'schedule', tick: null }, recentOutcomes: history.slice(0, 10) };
      for (const effect of evaluateHistory({ facts, alert, policy, cadenceSeconds: policy.cadenceSeconds, now: new Date() })) {
        if (effect.type === 'open') {
          opened++;
          alert = { id: opened, openedAt: new Date(), consecutiveFailures: failures, lastRunId: i, errorGroup: 'g', healthyStreak: 0, flappingSince: effect.intermittent ? new Date() : null };
        } else if (alert) alert = effect.type === 'resolve' ? null : next(alert, effect, i);
      }
    }
    return opened;
  }

  it('opens a few alerts a day, not one every quarter hour', () => {
    expect(alertsInADay('* * * * *', 0.5, 1440)).toBeLessThanOrEqual(3);
    expect(alertsInADay('* * * * *', 0.3, 1440)).toBeLessThanOrEqual(6);
  });

  it('needs max(recoverAfter, 3) successes in a row while flapping, and a quarter hour of them', () => {
    expect(effectiveRecoverAfter(1, false, 60)).toBe(1);
    expect(effectiveRecoverAfter(1, true, 60)).toBe(15);
    expect(effectiveRecoverAfter(1, true, 120)).toBe(8);
    expect(effectiveRecoverAfter(1, true, 300)).toBe(3);
    expect(effectiveRecoverAfter(1, true, 86_400)).toBe(3);
    expect(effectiveRecoverAfter(20, true, 60)).toBe(20);
  });
});
