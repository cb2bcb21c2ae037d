import { sql } from 'kysely';
import type { Alert, Workflow } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { endSilence } from '../services/alert-actions.js';
import { recordAlertEvents } from '../services/alert-events.js';
import { runMaintenanceClock } from './maintenance-clock.js';
import { workflowsInMaintenance } from './maintenance-rules.js';

/**
 * The escalation clock (DESIGN.md, core idea 6). An open warning nobody has
 * taken ownership of becomes critical when the workflow has kept failing
 * since it opened (consecutive failures reach the snapshotted
 * escalateAfterFailures) or when escalate_at (opened_at + multiplier ×
 * cadence captured at opening) passes. The UPDATE is the claim: its WHERE is
 * re-checked on the locked row, so of two replicas exactly one escalates.
 * It also ends silences whose time has passed, and runs the maintenance
 * clock (src/engine/maintenance-clock.ts: recurring occurrences recorded,
 * ended windows told once).
 */
export async function runEscalationClock(deps: Pick<Deps, 'db' | 'clock' | 'config'>): Promise<boolean> {
  const now = deps.clock.now();
  // Maintenance first: a window that just ended moves its warnings' deadlines before they are judged.
  const maintenance = await runMaintenanceClock(deps);
  const ended = await endExpiredSilences(deps, now);
  const escalated = await escalateDueWarnings(deps, now);
  return maintenance || ended + escalated > 0;
}

/**
 * A paused or disabled workflow's warning does not escalate (pausing stops the
 * clock; resuming moves the deadline by the pause, see workflow-state.ts), nor
 * does one whose workflow is in a maintenance window now.
 */
export async function escalateDueWarnings(deps: Pick<Deps, 'db' | 'config'>, now: Date): Promise<number> {
  return deps.db.transaction().execute(async (trx) => {
    const due = sql`
      alerts.status = 'open' and alerts.severity = 'warning' and alerts.acknowledged_at is null
        and ((alerts.escalate_at is not null and alerts.escalate_at <= ${now})
          or alerts.consecutive_failures >= coalesce((alerts.policy->>'escalateAfterFailures')::int, 2147483647))
        and exists (select 1 from workflows w where w.id = alerts.workflow_id and w.enabled and not w.paused)`;
    const candidates = await sql<Pick<Workflow, 'id' | 'tenantId' | 'maintenance'>>`
      select distinct w.id, w.tenant_id, w.maintenance from alerts join workflows w on w.id = alerts.workflow_id where ${due}
    `.execute(trx);
    if (candidates.rows.length === 0) return 0;
    const held = await workflowsInMaintenance(trx, candidates.rows, now);
    const { rows } = await sql<Alert>`
      update alerts set severity = 'critical', escalated_at = ${now}, updated_at = ${now}
      where ${due} and alerts.workflow_id <> all(${held}::int[])
      returning *
    `.execute(trx);
    if (rows.length === 0) return 0;
    // Set-based: one lookup of the tenants' channels and one batch of events, however many escalate at once.
    const channels = await trx
      .selectFrom('workflows')
      .innerJoin('tenants', 'tenants.id', 'workflows.tenantId')
      .select(['workflows.id', 'tenants.channel'])
      .where(
        'workflows.id',
        'in',
        [...new Set(rows.map((a) => a.workflowId))],
      )
      .execute();
    const channelOf = new Map(channels.map((c) => [c.id, c.channel]));
    await recordAlertEvents(
      trx,
      rows.map((alert) => {
        const threshold = Number((alert.policy as { escalateAfterFailures?: number }).escalateAfterFailures ?? Infinity);
        const reason = alert.consecutiveFailures >= threshold ? 'kept_failing' : 'deadline';
        return {
          alert,
          tenant: { channel: channelOf.get(alert.workflowId) ?? null },
          kind: 'escalated' as const,
          data: { from: 'warning', to: 'critical', reason, consecutiveFailures: alert.consecutiveFailures, escalateAt: alert.escalateAt?.toISOString() ?? null },
          now,
          config: deps.config,
        };
      }),
    );
    return rows.length;
  });
}

export async function endExpiredSilences(deps: Pick<Deps, 'db' | 'config'>, now: Date): Promise<number> {
  return deps.db.transaction().execute(async (trx) => {
    // skip locked: a replica (or a person unsilencing) already holding one finishes it; the rest are ours.
    const due = await trx
      .selectFrom('alerts')
      .selectAll()
      .where('status', '=', 'open')
      .where('silencedBy', 'is not', null)
      .where('silencedUntil', 'is not', null)
      .where('silencedUntil', '<=', now)
      .forUpdate()
      .skipLocked()
      .execute();
    for (const alert of due) {
      const tenant = await trx
        .selectFrom('workflows')
        .innerJoin('tenants', 'tenants.id', 'workflows.tenantId')
        .select(['tenants.channel'])
        .where('workflows.id', '=', alert.workflowId)
        .executeTakeFirstOrThrow();
      await endSilence(trx, alert, tenant, null, 'expired', now, deps.config);
    }
    return due.length;
  });
}
