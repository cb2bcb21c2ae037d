import type { Transaction } from 'kysely';
import { setNextTicks } from '../engine/tick-claim.js';
import type { Alert, Database, Workflow } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { nextFireAfter } from '../domain/schedule.js';
import { escalateAtAfterPause } from '../domain/escalation.js';
import { heldSpanOf } from '../domain/maintenance.js';
import type { RoutingConfig } from '../ledger/destinations.js';
import { recordAlertEvent, releaseHeldNotifications } from '../ledger/alert-events.js';
import type { Scope } from '../ledger/alert-queries.js';

/**
 * A workflow's own state as people change it (issue 13): pause and resume
 * by hand, and what disabling or deleting it does to its open alert. Each is
 * one transaction that locks the workflow row (the same lock the poller takes
 * before evaluating, so an evaluation and a pause of one workflow never
 * interleave), changes it and records the alert event with its outbox rows.
 */

export type ResolvedBy = 'run' | 'hand' | 'workflow_disabled' | 'workflow_deleted' | 'tenant_disabled';

/**
 * Closes the open alerts of workflows that stop being watched (disabled in
 * the file or over the API, deleted over the API): a `resolved` event with
 * `by` saying why. The alert's escalation ends with it; a silence's held
 * notifications are summarised into the resolution, as a recovery does.
 */
export async function resolveAlertsOfWorkflows(
  trx: Transaction<Database>,
  workflowIds: number[],
  by: Exclude<ResolvedBy, 'run' | 'hand'>,
  actor: string | null,
  now: Date,
  config: RoutingConfig,
  /** `how: 'removed_from_file'`: disabled because the file no longer names it. */
  extra: { how?: 'removed_from_file' } = {},
): Promise<Alert[]> {
  if (workflowIds.length === 0) return [];
  const open = await trx.selectFrom('alerts').selectAll().where('workflowId', 'in', workflowIds).where('status', '=', 'open').orderBy('id').forUpdate().execute();
  const resolved: Alert[] = [];
  for (const alert of open) {
    const next = await trx
      .updateTable('alerts')
      .set({ status: 'resolved', resolvedAt: now, healthyStreak: 0, updatedAt: now })
      .where('id', '=', alert.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const held = alert.silencedBy ? await releaseHeldNotifications(trx, next) : null;
    const tenant = await trx
      .selectFrom('workflows')
      .innerJoin('tenants', 'tenants.id', 'workflows.tenantId')
      .select('tenants.channel')
      .where('workflows.id', '=', alert.workflowId)
      .executeTakeFirstOrThrow();
    await recordAlertEvent(trx, {
      alert: next,
      tenant,
      kind: 'resolved',
      actor,
      data: { by, ...extra, durationSeconds: Math.round((now.getTime() - alert.openedAt.getTime()) / 1000), heldWhileSilenced: held },
      now,
      config,
    });
    resolved.push(next);
  }
  return resolved;
}

/** The enabled workflows of these tenants. */
export async function enabledWorkflowsOf(trx: Transaction<Database>, tenantIds: string[]): Promise<number[]> {
  if (tenantIds.length === 0) return [];
  return (await trx.selectFrom('workflows').select('id').where('tenantId', 'in', tenantIds).where('enabled', '=', true).execute()).map((w) => w.id);
}

/**
 * A tenant back (in the file, or over the API after the file dropped it): its
 * workflows start from the next tick to come, as a re-enabled workflow does.
 * What fell while the tenant was gone was never watched (neither fired nor
 * recorded missed), and must not be caught up on as a flood of missed ticks
 * (observed) or a late fire of a stale tick (managed).
 */
export async function restartClocks(trx: Transaction<Database>, tenantIds: string[], now: Date): Promise<void> {
  if (tenantIds.length === 0) return;
  const workflows = await trx.selectFrom('workflows').select(['id', 'cron', 'timezone']).where('tenantId', 'in', tenantIds).where('enabled', '=', true).execute();
  await setNextTicks(trx, workflows.map((w) => ({ id: w.id, nextTickAt: nextFireAfter(w.cron, w.timezone, now) })));
}

export type PauseResult =
  | { kind: 'ok'; workflow: Workflow; alert: Alert | null }
  | { kind: 'not_found' }
  | { kind: 'already_paused'; workflow: Workflow }
  | { kind: 'not_paused'; workflow: Workflow }
  /** Paused by the operator's file (or the API's PUT): resuming by hand would be undone at the next start. */
  | { kind: 'paused_by_config'; workflow: Workflow };

interface PauseInput {
  workflowId: number;
  actor: string;
  scope: Scope;
  reason?: string | null;
}

async function lockWorkflow(trx: Transaction<Database>, workflowId: number, scope: Scope): Promise<Workflow | undefined> {
  const workflow = await trx.selectFrom('workflows').selectAll().where('id', '=', workflowId).where('enabled', '=', true).forUpdate().executeTakeFirst();
  if (!workflow || (scope.tenantId !== undefined && workflow.tenantId !== scope.tenantId)) return undefined;
  return workflow;
}

async function openAlertOf(trx: Transaction<Database>, workflowId: number): Promise<Alert | undefined> {
  return trx.selectFrom('alerts').selectAll().where('workflowId', '=', workflowId).where('status', '=', 'open').forUpdate().executeTakeFirst();
}

async function channelOf(trx: Transaction<Database>, tenantId: string) {
  return trx.selectFrom('tenants').select('channel').where('id', '=', tenantId).executeTakeFirstOrThrow();
}

/**
 * Pauses a workflow by hand: nothing fires, missed ticks are not recorded
 * and its open alert stays open but stops escalating (the escalation clock
 * skips paused workflows) until it is resumed. The open alert's thread hears
 * it (`workflow_paused`).
 */
export async function pauseWorkflow(deps: Pick<Deps, 'db' | 'clock' | 'config'>, input: PauseInput): Promise<PauseResult> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx): Promise<PauseResult> => {
    const workflow = await lockWorkflow(trx, input.workflowId, input.scope);
    if (!workflow) return { kind: 'not_found' };
    if (workflow.paused) return { kind: 'already_paused', workflow };
    const reason = input.reason?.trim() || null;
    const next = await trx
      .updateTable('workflows')
      .set({ paused: true, pausedAt: now, pausedBy: input.actor, pauseReason: reason, updatedAt: now })
      .where('id', '=', workflow.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const alert = await openAlertOf(trx, workflow.id);
    if (alert) {
      await recordAlertEvent(trx, { alert, tenant: await channelOf(trx, workflow.tenantId), kind: 'workflow_paused', actor: input.actor, data: reason ? { reason } : {}, now, config: deps.config });
    }
    return { kind: 'ok', workflow: next, alert: alert ?? null };
  });
}

/**
 * Resumes a workflow paused by hand. The escalation clock resumes where it
 * stopped: an open warning's deadline moves by the time the workflow stood
 * paused. Like unpausing in the file, the next tick is the next one to come;
 * what fell while paused is neither fired late nor missed.
 */
export async function resumeWorkflow(deps: Pick<Deps, 'db' | 'clock' | 'config'>, input: Omit<PauseInput, 'reason'>): Promise<PauseResult> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx): Promise<PauseResult> => {
    const workflow = await lockWorkflow(trx, input.workflowId, input.scope);
    if (!workflow) return { kind: 'not_found' };
    if (!workflow.paused) return { kind: 'not_paused', workflow };
    if (!workflow.pausedBy) return { kind: 'paused_by_config', workflow };
    const next = await trx
      .updateTable('workflows')
      .set({ paused: false, pausedAt: null, pausedBy: null, pauseReason: null, nextTickAt: nextFireAfter(workflow.cron, workflow.timezone, now), updatedAt: now })
      .where('id', '=', workflow.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const alert = await resumeOpenAlert(trx, workflow, input.actor, now, deps.config);
    return { kind: 'ok', workflow: next, alert };
  });
}

/** The open alert of a workflow resumed: its warning's deadline moved by the time it stood paused, and its thread told. */
async function resumeOpenAlert(trx: Transaction<Database>, workflow: Workflow, actor: string | null, now: Date, config: RoutingConfig): Promise<Alert | null> {
  let alert = await openAlertOf(trx, workflow.id);
  if (!alert) return null;
  // The windows whose end was told during the pause already moved the deadline by what they held of it.
  const told = workflow.pausedAt
    ? await trx
        .selectFrom('maintenanceWindows')
        .select(['startsAt', 'endsAt', 'createdAt', 'recurrence'])
        .where('tenantId', '=', workflow.tenantId)
        .where((eb) => eb.or([eb('workflowId', 'is', null), eb('workflowId', '=', workflow.id)]))
        .where('toldAt', 'is not', null)
        .where('endsAt', '>', workflow.pausedAt)
        .where('startsAt', '<', now)
        .execute()
    : [];
  const escalateAt = escalateAtAfterPause(alert, workflow.pausedAt, now, told.map(heldSpanOf));
  // The owner's reminders (and an until-resolved silence's) stood still while paused: they count again from here,
  // so a resume does not remind at once for the time it stood.
  const reminding = alert.remindedAt !== null || alert.acknowledgedAt !== null;
  if (escalateAt?.getTime() !== alert.escalateAt?.getTime() || reminding) {
    alert = await trx
      .updateTable('alerts')
      .set({ escalateAt, ...(reminding ? { remindedAt: now } : {}), updatedAt: now })
      .where('id', '=', alert.id)
      .returningAll()
      .executeTakeFirstOrThrow();
  }
  // What it had counted by the resume: a resume alone does not make it "keep failing" (escalationDue).
  await recordAlertEvent(trx, { alert, tenant: await channelOf(trx, workflow.tenantId), kind: 'workflow_resumed', actor, data: { failures: alert.consecutiveFailures }, now, config });
  return alert;
}

/**
 * A pause set or lifted in the workflows file or by the API's PUT (`paused`),
 * after the row was written: the same clock as a pause by hand. Paused, it
 * records when (`paused_at`, so the escalation clock can carry on where it
 * stopped) and tells an open alert's thread; lifted, it moves an open
 * warning's deadline by the time it stood paused and tells the thread.
 * Before, neither path did either: a warning paused in the file escalated
 * the moment it was unpaused, for the whole pause.
 */
export async function configPauseChanged(trx: Transaction<Database>, before: Workflow, pausedNow: boolean, actor: string | null, now: Date, config: RoutingConfig): Promise<void> {
  if (!before.enabled || before.paused === pausedNow) return;
  if (pausedNow) {
    await trx.updateTable('workflows').set({ pausedAt: now }).where('id', '=', before.id).execute();
    const alert = await openAlertOf(trx, before.id);
    if (alert) await recordAlertEvent(trx, { alert, tenant: await channelOf(trx, before.tenantId), kind: 'workflow_paused', actor, data: {}, now, config });
    return;
  }
  await trx.updateTable('workflows').set({ pausedAt: null }).where('id', '=', before.id).execute();
  await resumeOpenAlert(trx, before, actor, now, config);
}
