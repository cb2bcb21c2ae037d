import type { Policy, Severity } from './cadence.js';
import { countTransitions, effectiveRecoverAfter, failingIntermittently, FLAP_WINDOW, isFlapping, type TickOutcome } from './flapping.js';
import { escalateAtFor } from './escalate-at.js';

export { escalateAtAfterPolicyChange, escalateAtFor } from './escalate-at.js';

/**
 * The evaluator's pure half (DESIGN.md, core ideas 4, 5, 7). The facts come
 * from history, recomputed on every evaluation, never from a stored counter:
 *
 * - `failures`: confirmed failures of *ticks* (original rows with a tick;
 *   missed ticks count, skipped ticks and retry attempts do not), newest first,
 *   until the first success of any kind.
 * - `healthyStreak`: successes (scheduled, recovered by retry, or manual)
 *   since the latest failure of any kind, and, for an open alert opened by a
 *   cause (running long, a missed deadline), since the newest success it knew
 *   of when it opened (`knownSuccessRunId`): a success from before the cause
 *   is no step towards `recoverAfter`.
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
  /**
   * The newest confirmed tick outcomes, newest first (at most FLAP_WINDOW;
   * missed = failure, skipped excluded). Loaded for workflows with an open
   * alert (flapping changes how it resolves) and for those failing now with
   * none (`failingIntermittently`), from the same boundary the failure count
   * starts at (an upstream incident's end, a resolve by hand).
   */
  recentOutcomes?: TickOutcome[];
  /**
   * The newest upstream incident that held this workflow back has resolved
   * and the workflow has not succeeded since: `failures` count only from that
   * resolution on, and an alert that opens now outlived that incident.
   */
  upstreamResolved?: { alertId: number };
}

export interface OpenAlertFacts {
  id: number;
  openedAt: Date;
  consecutiveFailures: number;
  lastRunId: number | null;
  errorGroup: string | null;
  healthyStreak: number;
  /** Set once the alert has been seen flapping (its `flapping` note was recorded). */
  flappingSince?: Date | null;
  /**
   * An alert opened by a cause, counting no failure (running long, a missed
   * completion deadline): the newest confirmed failure history already held
   * then. Known, not counted, and never told as news.
   */
  knownFailureRunId?: number | null;
  /** Likewise, the newest success history held when such an alert opened: from before the cause, it resolves nothing. */
  knownSuccessRunId?: number | null;
  /**
   * The error groups this alert has carried (its opening's, and each one it
   * changed to). A failure going back to one of them changes the alert's
   * current group but is not called out again: only a group new to the
   * alert is (core idea 9), so errors alternating between two causes are
   * told twice, not at every tick.
   */
  seenGroups?: readonly (string | null)[];
}

/** An alert opened by a flapping workflow below `alertAfter` in a row (flapping.ts `failingIntermittently`): it resolves after `recoverAfter` successes in a row, and needs no separate flapping note. */
export interface Intermittent {
  failures: number;
  window: number;
  transitions: number;
  recoverAfter: number;
}

export type Effect =
  /** `failures`: the confirmed failures in a row, as always; `intermittent`: opened by failing intermittently, not by that count. */
  | { type: 'open'; severity: Severity; failures: number; failure: FailureFacts; escalateAt: Date | null; intermittent?: Intermittent }
  /** `groupChanged`: the alert's current group changes (its count starts again); `seenBefore`: to one it has carried already, so not told as new. */
  | { type: 'failure_recorded'; failures: number; failure: FailureFacts; groupChanged: { from: string | null; to: string | null; seenBefore?: boolean } | null }
  | { type: 'healthy_streak'; streak: number; of: number }
  | { type: 'streak_reset' }
  | { type: 'resolve'; runId: number; trigger: string; durationSeconds: number; successes: number; recoverAfter: number }
  /** Recorded beside the main effect, once per alert: it is now flapping and needs `recoverAfter` successes in a row. */
  | { type: 'flapping'; transitions: number; window: number; recoverAfter: number };

/**
 * What the history means for the workflow's alert, given the policy in force.
 * At most one effect that changes the alert, first; for an open alert a
 * `flapping` effect may follow it (or stand alone).
 */
export function evaluateHistory(input: {
  facts: HistoryFacts;
  alert: OpenAlertFacts | null;
  policy: Pick<Policy, 'alertAfter' | 'recoverAfter' | 'firstSeverity' | 'escalationMultiplier'>;
  cadenceSeconds: number;
  /** The workflow's schedule, so the escalation deadline skips the stretches where it rests. */
  schedule?: { cron: string; timezone: string };
  /**
   * Paused by hand or in its definition: an operator who paused a workflow
   * wants no new alert from it. Its runs stay in the ledger and count as
   * usual (on resume, a job still failing alerts on its next failure), but
   * nothing opens; an alert already open still hears failures and still
   * resolves on a success (good news is never held back).
   */
  paused?: boolean;
  now: Date;
}): Effect[] {
  const { facts, alert, policy, now } = input;
  if (!alert) {
    if (input.paused || !facts.newestFailure) return [];
    const intermittent = facts.failures >= policy.alertAfter ? null : failingIntermittently(facts.recentOutcomes ?? [], policy.alertAfter);
    if (facts.failures < policy.alertAfter && !intermittent) return [];
    return [
      {
        type: 'open',
        severity: policy.firstSeverity,
        failures: facts.failures,
        failure: facts.newestFailure,
        escalateAt: escalateAtFor(now, policy.firstSeverity, policy.escalationMultiplier, input.cadenceSeconds, input.schedule),
        ...(intermittent ? { intermittent: { ...intermittent, recoverAfter: effectiveRecoverAfter(policy.recoverAfter, true, input.cadenceSeconds) } } : {}),
      },
    ];
  }
  const transitions = countTransitions(facts.recentOutcomes ?? []);
  // Once marked flapping, the alert stays so until it resolves: a run of successes that calms the window is the very
  // streak whose length is in question (an every-minute job's 8 lucky successes are no recovery).
  const flapping = isFlapping(transitions) || Boolean(alert.flappingSince);
  const recoverAfter = effectiveRecoverAfter(policy.recoverAfter, flapping, input.cadenceSeconds);
  const main = decideOpenAlert(facts, alert, recoverAfter, now);
  // Told once per alert, and not on the evaluation that closes it (the recovery says enough).
  if (flapping && !alert.flappingSince && main?.type !== 'resolve') {
    return [...(main ? [main] : []), { type: 'flapping', transitions, window: FLAP_WINDOW, recoverAfter }];
  }
  return main ? [main] : [];
}

function decideOpenAlert(facts: HistoryFacts, alert: OpenAlertFacts, recoverAfter: number, now: Date): Effect | null {
  // An alert opened by a cause on a healthy workflow (the tick before succeeded, this one runs long): that success is
  // from before the cause and says nothing of it. Until something newer than it happens, there is nothing to decide.
  if (countsNoFailure(alert) && facts.failures === 0 && facts.newestSuccess && facts.newestSuccess.runId === (alert.knownSuccessRunId ?? null)) return null;
  if (facts.newestSuccess && facts.failures === 0 && facts.healthyStreak >= recoverAfter) {
    return {
      type: 'resolve',
      runId: facts.newestSuccess.runId,
      trigger: facts.newestSuccess.trigger,
      durationSeconds: Math.round((now.getTime() - alert.openedAt.getTime()) / 1000),
      successes: facts.healthyStreak,
      recoverAfter,
    };
  }
  if (facts.newestFailure && isNewFailure(facts.newestFailure, facts.failures, alert)) {
    // An alert opened by a cause has no error yet: its first one is where its group starts, not "a different error".
    const to = facts.newestFailure.errorGroup;
    const groupChanged = alert.errorGroup !== null && to !== alert.errorGroup ? { from: alert.errorGroup, to, ...((alert.seenGroups ?? []).includes(to) ? { seenBefore: true } : {}) } : null;
    return { type: 'failure_recorded', failures: facts.failures, failure: facts.newestFailure, groupChanged };
  }
  if (facts.healthyStreak > 0 && facts.healthyStreak !== alert.healthyStreak) {
    return { type: 'healthy_streak', streak: facts.healthyStreak, of: recoverAfter };
  }
  if (facts.healthyStreak === 0 && alert.healthyStreak > 0) return { type: 'streak_reset' };
  return null;
}

/**
 * Is there a failure the open alert has not heard of? A newer failure, or an
 * older tick's failure that landed after a newer one (two replicas, retries
 * finishing out of order): the streak grew either way and is counted; the
 * failure told stays the newest.
 *
 * An alert opened by a cause has counted no failure yet, and history may
 * hold one from before it opened that stayed below the threshold (an hourly
 * job failed once at 01:00, its 02:00 run is running long): that failure is
 * the one it knew of when it opened (`knownFailureRunId`), not news. Until the
 * alert counts a failure of its own, only a failure other than that one is.
 *
 * The failure it last heard of, now with another error group, is news too:
 * that row's verdict was rewritten (a tick recorded missed whose late end
 * reported a failure), and the alert carries the real error from then on.
 */
function isNewFailure(newest: FailureFacts, failures: number, alert: OpenAlertFacts): boolean {
  if (countsNoFailure(alert)) return newest.runId !== (alert.knownFailureRunId ?? null);
  // The same row with another error: its verdict was rewritten (a tick recorded missed, then its late report failed).
  return newest.runId !== alert.lastRunId || failures > alert.consecutiveFailures || newest.errorGroup !== alert.errorGroup;
}

/** An alert opened by a cause that has not counted a failure of its own yet. */
function countsNoFailure(alert: OpenAlertFacts): boolean {
  return alert.consecutiveFailures === 0 && alert.lastRunId === null;
}

/** The alert columns the evaluation changes (structurally the alerts row). */
export interface AlertStateFields {
  status: 'open' | 'resolved';
  consecutiveFailures: number;
  lastError: string | null;
  stage: string | null;
  lastRunId: number | null;
  healthyStreak: number;
  errorGroup: string | null;
  errorGroupFirstAt: Date | null;
  errorGroupLastAt: Date | null;
  errorGroupCount: number;
  resolvedAt: Date | null;
  resolvedByRunId: number | null;
  flappingSince: Date | null;
  updatedAt: Date;
}

/**
 * The state transition of an open alert: the alert after the effects of one
 * evaluation (every effect but `open`, which makes a new row). Pure; the
 * evaluator writes what it returns.
 */
export function nextAlertState<A extends AlertStateFields>(current: A, effects: readonly Effect[], now: Date): A {
  return effects.reduce<A>((alert, effect) => applyEffect(alert, effect, now), current);
}

function applyEffect<A extends AlertStateFields>(current: A, effect: Effect, now: Date): A {
  switch (effect.type) {
    case 'open':
      return current;
    case 'failure_recorded': {
      const { failure, groupChanged } = effect;
      return {
        ...current,
        consecutiveFailures: effect.failures,
        lastError: failure.error,
        stage: failure.stage,
        lastRunId: failure.runId,
        healthyStreak: 0,
        errorGroup: failure.errorGroup,
        // A new group, or the first of an alert that had none (opened by a cause), starts its count here.
        ...(groupChanged || (current.errorGroup === null && current.consecutiveFailures === 0)
          ? { errorGroupFirstAt: now, errorGroupLastAt: now, errorGroupCount: 1 }
          : { errorGroupLastAt: now, errorGroupCount: current.errorGroupCount + 1 }),
        updatedAt: now,
      };
    }
    case 'healthy_streak':
      return { ...current, healthyStreak: effect.streak, updatedAt: now };
    case 'streak_reset':
      return { ...current, healthyStreak: 0, updatedAt: now };
    case 'resolve':
      return { ...current, status: 'resolved', resolvedAt: now, resolvedByRunId: effect.runId, healthyStreak: 0, updatedAt: now };
    case 'flapping':
      return { ...current, flappingSince: now, updatedAt: now };
  }
}
