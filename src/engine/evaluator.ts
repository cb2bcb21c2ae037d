import type { Transaction } from 'kysely';
import type { Alert, Database, Run, Tenant, Workflow } from '../db/schema.js';
import type { Deps } from '../deps.js';
import type { CadenceProfile } from '../domain/cadence.js';
import { evaluateHistory, type Effect } from '../domain/evaluate.js';
import { recordAlertEvent } from '../services/alert-events.js';
import { releaseHeldNotifications } from '../services/alert-events.js';
import { loadHistoryFacts } from './history-facts.js';

export interface EvaluationTarget {
  workflow: Workflow;
  tenant: Tenant;
  profile: CadenceProfile;
  /** Manual runs that ended in this batch: the open alert hears how they went. */
  finishedManualRuns: Run[];
}

const LOG_EXCERPT_IN_EVENT = 4000;

/**
 * Evaluates workflows whose rows the caller has already locked (`for update`
 * on the workflow row serialises evaluations of one workflow across replicas,
 * which is what keeps "one open alert per workflow" true without leaning on
 * the unique index). Facts for all of them come from one query.
 */
export async function evaluateWorkflows(trx: Transaction<Database>, deps: Pick<Deps, 'config' | 'launchers'>, targets: EvaluationTarget[], now: Date): Promise<void> {
  if (targets.length === 0) return;
  const ids = targets.map((t) => t.workflow.id);
  const facts = await loadHistoryFacts(trx, ids);
  const open = await trx.selectFrom('alerts').selectAll().where('workflowId', 'in', ids).where('status', '=', 'open').forUpdate().execute();
  const openBy = new Map(open.map((a) => [a.workflowId, a]));
  for (const target of targets) {
    const { workflow, tenant, profile } = target;
    let alert = openBy.get(workflow.id) ?? null;
    const record = (a: Alert, kind: Parameters<typeof recordAlertEvent>[1]['kind'], data: Record<string, unknown>, actor: string | null = null) =>
      recordAlertEvent(trx, { alert: a, tenant, kind, actor, data, now, config: deps.config });

    if (alert) {
      for (const run of target.finishedManualRuns) {
        await record(alert, 'run_finished', { runId: run.id, status: run.status, error: run.error, requestedBy: run.requestedBy }, run.requestedBy);
      }
    }
    const effects = evaluateHistory({
      facts: facts.get(workflow.id)!,
      alert,
      policy: profile,
      cadenceSeconds: profile.cadenceSeconds,
      now,
    });
    for (const effect of effects) alert = await apply(trx, deps, target, alert, effect, now, record);
  }
}

type Recorder = (a: Alert, kind: Parameters<typeof recordAlertEvent>[1]['kind'], data: Record<string, unknown>, actor?: string | null) => Promise<unknown>;

async function apply(
  trx: Transaction<Database>,
  deps: Pick<Deps, 'config' | 'launchers'>,
  target: EvaluationTarget,
  alert: Alert | null,
  effect: Effect,
  now: Date,
  record: Recorder,
): Promise<Alert | null> {
  const { workflow, profile } = target;
  switch (effect.type) {
    case 'open': {
      const { failure } = effect;
      const last = await trx
        .selectFrom('alerts')
        .select((eb) => eb.fn.max('generation').as('g'))
        .where('workflowId', '=', workflow.id)
        .executeTakeFirst();
      const noLauncher = !deps.launchers(workflow);
      const opened = await trx
        .insertInto('alerts')
        .values({
          workflowId: workflow.id,
          generation: (last?.g ?? 0) + 1,
          status: 'open',
          severity: effect.severity,
          openedAt: now,
          escalatedAt: null,
          escalateAt: effect.escalateAt,
          resolvedAt: null,
          cadenceSeconds: profile.cadenceSeconds,
          policy: JSON.stringify(snapshotPolicy(profile, noLauncher)),
          consecutiveFailures: effect.failures,
          lastError: failure.error,
          errorGroup: failure.errorGroup,
          errorGroupFirstAt: now,
          errorGroupLastAt: now,
          errorGroupCount: 1,
          stage: failure.stage,
          firstRunId: failure.runId,
          lastRunId: failure.runId,
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
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await record(opened, 'opened', {
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
        retries: noLauncher ? 0 : profile.retries,
        noLauncher,
        escalateAt: effect.escalateAt?.toISOString() ?? null,
      });
      return opened;
    }
    case 'failure_recorded': {
      const current = alert!;
      const { failure, groupChanged } = effect;
      const next = await trx
        .updateTable('alerts')
        .set({
          consecutiveFailures: effect.failures,
          lastError: failure.error,
          stage: failure.stage,
          lastRunId: failure.runId,
          healthyStreak: 0,
          errorGroup: failure.errorGroup,
          ...(groupChanged
            ? { errorGroupFirstAt: now, errorGroupLastAt: now, errorGroupCount: 1 }
            : { errorGroupLastAt: now, errorGroupCount: current.errorGroupCount + 1 }),
          updatedAt: now,
        })
        .where('id', '=', current.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      if (groupChanged) await record(next, 'error_group_changed', { from: groupChanged.from, to: groupChanged.to, error: failure.error, stage: failure.stage, runId: failure.runId });
      await record(next, 'failure_recorded', { consecutiveFailures: effect.failures, error: failure.error, errorGroup: failure.errorGroup, runId: failure.runId, missed: failure.status === 'missed' });
      return next;
    }
    case 'healthy_streak': {
      const next = await trx.updateTable('alerts').set({ healthyStreak: effect.streak, updatedAt: now }).where('id', '=', alert!.id).returningAll().executeTakeFirstOrThrow();
      await record(next, 'healthy_streak', { streak: effect.streak, of: effect.of });
      return next;
    }
    case 'streak_reset': {
      return trx.updateTable('alerts').set({ healthyStreak: 0, updatedAt: now }).where('id', '=', alert!.id).returningAll().executeTakeFirstOrThrow();
    }
    case 'resolve': {
      const current = alert!;
      const next = await trx
        .updateTable('alerts')
        .set({ status: 'resolved', resolvedAt: now, resolvedByRunId: effect.runId, healthyStreak: 0, updatedAt: now })
        .where('id', '=', current.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      // A silence ends with the alert: what it held is summarised in the recovery itself.
      const held = current.silencedBy ? await releaseHeldNotifications(trx, next) : null;
      await record(next, 'resolved', { runId: effect.runId, durationSeconds: effect.durationSeconds, trigger: effect.trigger, heldWhileSilenced: held });
      return null;
    }
  }
}

/** The policy in force when the alert opened, kept on the alert (editing the workflow mid-incident changes nothing). */
function snapshotPolicy(profile: CadenceProfile, noLauncher: boolean) {
  return {
    retries: profile.retries,
    alertAfter: profile.alertAfter,
    firstSeverity: profile.firstSeverity,
    escalationMultiplier: profile.escalationMultiplier,
    recoverAfter: profile.recoverAfter,
    graceSeconds: profile.graceSeconds,
    timeoutSeconds: profile.timeoutSeconds,
    minRows: profile.minRows,
    escalateAfterFailures: profile.escalateAfterFailures,
    cadenceSeconds: profile.cadenceSeconds,
    derived: profile.derived,
    overrides: profile.overrides,
    noLauncher,
  };
}
