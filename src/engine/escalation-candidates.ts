import { sql, type Transaction } from 'kysely';
import type { Alert, Database, Workflow } from '../db/schema.js';
import { escalationDue } from '../domain/escalation.js';
import { alertsAwaitingWindowEnd, workflowsInMaintenance } from './maintenance-rules.js';

/**
 * The escalation clock's reads (src/engine/escalation.ts): the alerts each
 * step locks, and which of them may escalate now.
 */

/**
 * When an open unacknowledged warning is due to escalate: escalationDue's
 * rule (src/domain/escalation.ts) in SQL, word for word the expression of the
 * partial index `alerts_escalation_due` (migration 0020), so the claim reads
 * and locks only the due ones through it. The domain rule still decides each
 * locked row.
 */
const ESCALATION_DUE_AT = sql<Date | null>`(case when alerts.consecutive_failures >= escalation_threshold(alerts.policy) then alerts.opened_at else alerts.escalate_at end)`;

export type Candidate = {
  alert: Alert;
  channel: string | null;
  oncall: { group?: string; users?: string[] };
  ownershipExpiresAfterSeconds: number | null;
  workflow: Pick<Workflow, 'id' | 'tenantId' | 'maintenance' | 'paused' | 'enabled'>;
};

/**
 * Open alerts matching `where`, locked, with what the rules need of their
 * tenant. `due_warning`: the unacknowledged warnings due at `now` only
 * (ESCALATION_DUE_AT), so a replica's pass locks what it will escalate, not
 * every open warning.
 */
export async function lockCandidates(trx: Transaction<Database>, where: 'due_warning' | 'owned' | 'owned_or_silenced_until_resolved', now?: Date): Promise<Candidate[]> {
  const rows = await trx
    .selectFrom('alerts')
    .innerJoin('workflows', 'workflows.id', 'alerts.workflowId')
    .innerJoin('tenants', 'tenants.id', 'workflows.tenantId')
    .selectAll('alerts')
    .select(['tenants.channel as tenantChannel', 'tenants.oncall as tenantOncall', 'tenants.ownershipExpiresAfterSeconds as tenantExpiry', 'workflows.tenantId as wfTenant', 'workflows.maintenance as wfMaintenance', 'workflows.paused as wfPaused', 'workflows.enabled as wfEnabled'])
    .where('alerts.status', '=', 'open')
    // A paused or disabled workflow's warning does not escalate (pausing stops the clock; resuming moves the deadline).
    .$if(where === 'due_warning', (q) =>
      q
        .where('alerts.severity', '=', 'warning')
        .where('alerts.acknowledgedAt', 'is', null)
        .where(ESCALATION_DUE_AT, '<=', now!)
        .where('workflows.enabled', '=', true)
        .where('workflows.paused', '=', false),
    )
    .$if(where === 'owned', (q) => q.where('alerts.ownerUser', 'is not', null).where('alerts.acknowledgedAt', 'is not', null).where('tenants.ownershipExpiresAfterSeconds', 'is not', null))
    // A paused workflow reminds nobody (reminderDue decides; this only spares locking its alerts).
    .$if(where === 'owned_or_silenced_until_resolved', (q) =>
      q.where('workflows.paused', '=', false).where((eb) =>
        eb.or([
          eb.and([eb('alerts.ownerUser', 'is not', null), eb('alerts.acknowledgedAt', 'is not', null)]),
          eb.and([eb('alerts.silencedBy', 'is not', null), eb('alerts.silencedUntil', 'is', null)]),
          // A critical alert nobody owns pages its on-call again (reminderDue).
          eb.and([eb('alerts.severity', '=', 'critical'), eb('alerts.ownerUser', 'is', null), eb('alerts.silencedBy', 'is', null)]),
        ]),
      ),
    )
    .orderBy('alerts.id')
    .forUpdate('alerts')
    .skipLocked()
    .execute();
  return rows.map(({ tenantChannel, tenantOncall, tenantExpiry, wfTenant, wfMaintenance, wfPaused, wfEnabled, ...alert }) => ({
    alert: alert as Alert,
    channel: tenantChannel,
    oncall: tenantOncall ?? {},
    ownershipExpiresAfterSeconds: tenantExpiry,
    workflow: { id: alert.workflowId, tenantId: wfTenant, maintenance: wfMaintenance, paused: wfPaused, enabled: wfEnabled },
  }));
}

export type EscalationReason = 'kept_failing' | 'deadline';

/**
 * Of locked candidates, as they stand (`alertOf`: a lapse asks about the
 * alert with its owner gone), those that escalate now, with the reason:
 * escalationDue says so (the failures known at a resume not counting as
 * "kept failing"), the workflow is enabled and running, it is not inside a
 * maintenance window, and no window that ended is still to move its deadline.
 */
export async function escalatingNow<C extends Candidate>(trx: Transaction<Database>, candidates: readonly C[], now: Date, alertOf: (c: C) => Alert = (c) => c.alert): Promise<(C & { reason: EscalationReason })[]> {
  const running = candidates.filter((c) => c.workflow.enabled && !c.workflow.paused);
  const atResume = await failuresAtResume(trx, running.map((c) => c.alert.id));
  const failures = await newestFailures(trx, running.map((c) => alertOf(c).lastRunId));
  const decided = running.flatMap((c) => {
    const alert = alertOf(c);
    const newestFailure = alert.lastRunId === null ? null : (failures.get(Number(alert.lastRunId)) ?? null);
    const decision = escalationDue({ ...alert, failuresAtResume: atResume.get(c.alert.id) ?? null, newestFailure }, now);
    return decision.due ? [{ ...c, reason: decision.reason }] : [];
  });
  if (decided.length === 0) return [];
  // Nothing pages inside a maintenance window, nor before a window's end has moved the deadline.
  const held = new Set(await workflowsInMaintenance(trx, decided.map((d) => d.workflow), now));
  const awaiting = await alertsAwaitingWindowEnd(trx, decided.map((d) => ({ id: d.alert.id, openedAt: d.alert.openedAt, workflow: d.workflow })), now);
  return decided.filter((d) => !held.has(d.workflow.id) && !awaiting.has(d.alert.id));
}

/** Of `alertIds`, the failures each had counted when its workflow was last resumed (its newest `workflow_resumed` event). */
async function failuresAtResume(trx: Transaction<Database>, alertIds: number[]): Promise<Map<number, number>> {
  if (alertIds.length === 0) return new Map();
  const rows = await trx
    .selectFrom('alertEvents')
    .select(['alertId', 'data'])
    .distinctOn('alertId')
    .where('alertId', 'in', alertIds)
    .where('kind', '=', 'workflow_resumed')
    .orderBy('alertId')
    .orderBy('id', 'desc')
    .execute();
  return new Map(rows.flatMap((r) => {
    const failures = (r.data as { failures?: unknown } | null)?.failures;
    return typeof failures === 'number' ? [[r.alertId, failures] as const] : [];
  }));
}

/** Each alert's newest counted failure (its last run), so a missed streak known at the opening is not "kept failing". */
async function newestFailures(trx: Transaction<Database>, runIds: (number | null)[]): Promise<Map<number, { tick: Date | null; status: string }>> {
  const ids = [...new Set(runIds.filter((id): id is number => id !== null))];
  if (ids.length === 0) return new Map();
  const rows = await trx.selectFrom('runs').select(['id', 'tick', 'status']).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [Number(r.id), { tick: r.tick, status: r.status }]));
}
