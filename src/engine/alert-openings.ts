import type { Alert, Tenant } from '../db/schema.js';
import type { Deps } from '../deps.js';
import type { CadenceProfile } from '../domain/cadence.js';
import type { Effect } from '../domain/evaluate.js';
import { escalationMention } from '../domain/escalation.js';
import { effectivePolicy } from '../domain/policy-version.js';
import { retriesAllowed } from '../domain/retry-budget.js';
import { provisionalAlertId } from '../ledger/event-writes.js';
import type { EvaluationTarget } from './evaluator.js';

/** The alerts a batch opens: their rows, the `opened` event's data and the policy snapshot they keep (the evaluator and run-duration.ts). */

const LOG_EXCERPT_IN_EVENT = 4000;

type OpenEffect = Extract<Effect, { type: 'open' }>;
/** An opening; a cause other than a failure may have no run (a deadline missed with nothing started). */
export type OpeningEffect = Omit<OpenEffect, 'failure'> & { failure: Omit<OpenEffect['failure'], 'runId'> & { runId: number | null } };

/** The `opened` event's data: the failure that opened it and what the alert will do next. */
export function openedData(target: EvaluationTarget, effect: Extract<Effect, { type: 'open' }>, noLauncher: boolean): Record<string, unknown> {
  const { failure } = effect;
  return {
    severity: effect.severity,
    consecutiveFailures: effect.failures,
    errorGroup: failure.errorGroup,
    error: failure.error,
    stage: failure.stage,
    runId: failure.runId,
    missed: failure.status === 'missed',
    tick: failure.tick?.toISOString() ?? null,
    logExcerpt: failure.logExcerpt ? failure.logExcerpt.slice(-LOG_EXCERPT_IN_EVENT) : null,
    logUrl: failure.logUrl,
    retries: retriesAllowed(target.profile.retries, !noLauncher),
    noLauncher,
    escalateAt: effect.escalateAt?.toISOString() ?? null,
    // Opened by failing intermittently (below alertAfter in a row): the opening says so, and how it will resolve.
    ...(effect.intermittent ? { intermittent: effect.intermittent } : {}),
    // Opening at critical pages the tenant's on-call (when it names anyone), as an escalation to critical does.
    ...(effect.severity === 'critical' ? openingPage(target.tenant) : {}),
  };
}

export function openingPage(tenant: Tenant): { mention?: ReturnType<typeof escalationMention> } {
  const mention = escalationMention(null, tenant.oncall ?? {});
  return mention.users.length + mention.groups.length > 0 ? { mention } : {};
}

/**
 * The alerts that open in this batch, as rows to insert and as the alert
 * their events are recorded against, under a provisional id (written with the events, see `writeAlertsAndEvents`).
 * `lastRunId: null` and a `cause` open an alert for a run that has not failed (yet): running long, a missed
 * deadline (src/engine/run-duration.ts inserts that one itself); `known` is then what history already held (a
 * failure below the threshold, the newest success): the alert never tells that failure as news, nor resolves on
 * that success.
 */
export function openAlerts(
  deps: Pick<Deps, 'launchers'>,
  opening: { target: Omit<EvaluationTarget, 'finishedManualRuns'>; effect: OpeningEffect; lastRunId?: null; cause?: string; upstreamAlertId?: number | null; known?: { failureRunId: number | null; successRunId: number | null } }[],
  now: Date,
): { workflowId: number; row: Record<string, unknown>; alert: Alert }[] {
  return opening.map(({ target: { workflow, profile }, effect, lastRunId, cause, upstreamAlertId, known }) => {
    const { failure } = effect;
    const alert: Alert = {
      id: provisionalAlertId(workflow.id),
      workflowId: workflow.id,
      generation: 0,
      status: 'open',
      severity: effect.severity,
      openedAt: now,
      escalatedAt: null,
      escalateAt: effect.escalateAt,
      resolvedAt: null,
      cadenceSeconds: profile.cadenceSeconds,
      policy: snapshotPolicy(profile, !deps.launchers(workflow)),
      policyVersion: workflow.policyVersion,
      consecutiveFailures: effect.failures,
      lastError: failure.error,
      errorGroup: failure.errorGroup,
      errorGroupFirstAt: now,
      errorGroupLastAt: now,
      errorGroupCount: 1,
      stage: failure.stage,
      firstRunId: failure.runId,
      lastRunId: lastRunId === null ? null : failure.runId,
      cause: cause ?? null,
      ownerTeam: 'engineering',
      ownerUser: null,
      ownerNote: null,
      acknowledgedBy: null,
      acknowledgedAt: null,
      silencedUntil: null,
      silencedBy: null,
      silenceReason: null,
      healthyStreak: 0,
      resolvedByRunId: null,
      updatedAt: now,
      // Opened flapping (failing intermittently): its opening told it, so no separate flapping note follows.
      flappingSince: effect.intermittent ? now : null,
      remindedAt: null,
      upstreamAlertId: upstreamAlertId ?? null,
      knownFailureRunId: known?.failureRunId ?? null,
      knownSuccessRunId: known?.successRunId ?? null,
      // Written with its opening event (recordAlertEvents), from the routes configured then.
      pagersAtOpening: null,
    };
    return { workflowId: workflow.id, row: snakeRow(alert), alert };
  });
}

function snakeRow(alert: Alert): Record<string, unknown> {
  return Object.fromEntries(Object.entries(alert).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), v]));
}

/** The policy in force when the alert opened, kept on the alert (editing the workflow mid-incident changes nothing). */
function snapshotPolicy(profile: CadenceProfile, noLauncher: boolean) {
  const { remindAfterSeconds, ownershipLapsesAfterReminders } = effectivePolicy(profile);
  return {
    retries: profile.retries,
    alertAfter: profile.alertAfter,
    firstSeverity: profile.firstSeverity,
    escalationMultiplier: profile.escalationMultiplier,
    recoverAfter: profile.recoverAfter,
    graceSeconds: profile.graceSeconds,
    timeoutSeconds: profile.timeoutSeconds,
    minRows: profile.minRows,
    minDurationSeconds: profile.minDurationSeconds,
    runningLongAfterSeconds: profile.runningLongAfterSeconds,
    completeBy: profile.completeBy,
    // The owner's reminders follow a policy change while open (services/policy-versions.ts); read by domain/escalation.ts.
    remindAfterSeconds,
    ownershipLapsesAfterReminders,
    escalateAfterFailures: profile.escalateAfterFailures,
    cadenceSeconds: profile.cadenceSeconds,
    derived: profile.derived,
    overrides: profile.overrides,
    noLauncher,
  };
}
