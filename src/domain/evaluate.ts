import type { Policy, Severity } from './cadence.js';

/**
 * The evaluator's pure half (DESIGN.md, core ideas 4, 5, 7). The facts come
 * from history, recomputed on every evaluation, never from a stored counter:
 *
 * - `failures`: confirmed failures of *ticks* (original rows with a tick;
 *   missed ticks count, skipped ticks and retry attempts do not), newest first,
 *   until the first success of any kind.
 * - `healthyStreak`: successes (scheduled, recovered by retry, or manual)
 *   since the latest failure of any kind.
 *
 * Manual runs: a successful one is a success (it stops the count and can
 * resolve); a failed one resets the healthy streak but is not a tick, so it
 * does not add to the failure count (five clicks on "Run now" while a fix is
 * being tried must not escalate anything).
 */

export interface FailureFacts {
  runId: number;
  error: string | null;
  errorGroup: string | null;
  stage: string | null;
  status: 'failed' | 'missed';
  tick: Date | null;
  logExcerpt: string | null;
  logUrl: string | null;
}

export interface HistoryFacts {
  failures: number;
  healthyStreak: number;
  /** The newest confirmed tick failure after the latest success, if any. */
  newestFailure: FailureFacts | null;
  /** The newest success, if it is newer than every failure. */
  newestSuccess: { runId: number; trigger: string; tick: Date | null } | null;
}

export interface OpenAlertFacts {
  id: number;
  openedAt: Date;
  consecutiveFailures: number;
  lastRunId: number | null;
  errorGroup: string | null;
  healthyStreak: number;
}

export type Effect =
  | { type: 'open'; severity: Severity; failures: number; failure: FailureFacts; escalateAt: Date | null }
  | { type: 'failure_recorded'; failures: number; failure: FailureFacts; groupChanged: { from: string | null; to: string | null } | null }
  | { type: 'healthy_streak'; streak: number; of: number }
  | { type: 'streak_reset' }
  | { type: 'resolve'; runId: number; trigger: string; durationSeconds: number };

export function escalateAtFor(openedAt: Date, severity: Severity, multiplier: number, cadenceSeconds: number): Date | null {
  if (severity !== 'warning') return null;
  return new Date(openedAt.getTime() + Math.round(multiplier * cadenceSeconds * 1000));
}

/** What the history means for the workflow's alert, given the policy in force. */
export function evaluateHistory(input: {
  facts: HistoryFacts;
  alert: OpenAlertFacts | null;
  policy: Pick<Policy, 'alertAfter' | 'recoverAfter' | 'firstSeverity' | 'escalationMultiplier'>;
  cadenceSeconds: number;
  now: Date;
}): Effect[] {
  const { facts, alert, policy, now } = input;
  if (!alert) {
    if (facts.newestFailure && facts.failures >= policy.alertAfter) {
      return [
        {
          type: 'open',
          severity: policy.firstSeverity,
          failures: facts.failures,
          failure: facts.newestFailure,
          escalateAt: escalateAtFor(now, policy.firstSeverity, policy.escalationMultiplier, input.cadenceSeconds),
        },
      ];
    }
    return [];
  }
  if (facts.newestSuccess && facts.failures === 0 && facts.healthyStreak >= policy.recoverAfter) {
    return [
      {
        type: 'resolve',
        runId: facts.newestSuccess.runId,
        trigger: facts.newestSuccess.trigger,
        durationSeconds: Math.round((now.getTime() - alert.openedAt.getTime()) / 1000),
      },
    ];
  }
  if (facts.newestFailure && facts.newestFailure.runId !== alert.lastRunId) {
    const groupChanged = facts.newestFailure.errorGroup !== alert.errorGroup ? { from: alert.errorGroup, to: facts.newestFailure.errorGroup } : null;
    return [{ type: 'failure_recorded', failures: facts.failures, failure: facts.newestFailure, groupChanged }];
  }
  if (facts.healthyStreak > 0 && facts.healthyStreak !== alert.healthyStreak) {
    return [{ type: 'healthy_streak', streak: facts.healthyStreak, of: policy.recoverAfter }];
  }
  if (facts.healthyStreak === 0 && alert.healthyStreak > 0) return [{ type: 'streak_reset' }];
  return [];
}
