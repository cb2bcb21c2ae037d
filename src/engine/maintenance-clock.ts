import { sql, type Transaction } from 'kysely';
import type { Alert, Database, MaintenanceWindowsTable, Workflow } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { endedPauses } from '../domain/escalation.js';
import { heldSpanOf, newlyHeldMs, occurrenceAt, recurringRules, type MaintenanceRule } from '../domain/maintenance.js';
import { recordAlertEvents, type EventInput } from '../ledger/alert-events.js';
import type { Selectable } from 'kysely';

type WindowRow = Selectable<MaintenanceWindowsTable>;

/** Windows whose end is told per pass; more wait for the next one. */
const ENDED_PER_PASS = 50;

/**
 * The maintenance clock: records the occurrence of each recurring window that
 * is in force (so its end has a row to claim), then tells the end of every
 * window that has ended, once across replicas. One pass is one tick of the
 * loop runner.
 */
export async function runMaintenanceClock(deps: Pick<Deps, 'db' | 'clock' | 'config'>): Promise<boolean> {
  const now = deps.clock.now();
  const recorded = await recordRecurringOccurrences(deps, now);
  const told = await tellEndedWindows(deps, now);
  return recorded + told > 0;
}

/**
 * One row per occurrence of a recurring rule, written when the clock first
 * sees it in force; the unique index on (tenant, workflow, rule, start) makes
 * replicas write it once. An occurrence that began and ended while no
 * replica ran is not recorded, and so not told: nothing was watched in it.
 */
export async function recordRecurringOccurrences(deps: Pick<Deps, 'db'>, now: Date): Promise<number> {
  const workflows = await deps.db.selectFrom('workflows').select(['id', 'tenantId', 'maintenance']).where('enabled', '=', true).where(sql<boolean>`maintenance <> '[]'::jsonb`).execute();
  const tenants = await deps.db.selectFrom('tenants').select(['id', 'maintenance']).where('enabled', '=', true).where(sql<boolean>`maintenance <> '[]'::jsonb`).execute();
  const rows: { tenantId: string; workflowId: number | null; rules: MaintenanceRule[] }[] = [
    ...workflows.map((w) => ({ tenantId: w.tenantId, workflowId: w.id, rules: recurringRules(w.maintenance, 'workflow') })),
    ...tenants.map((t) => ({ tenantId: t.id, workflowId: null, rules: recurringRules(t.maintenance, 'tenant') })),
  ];
  let inserted = 0;
  for (const { tenantId, workflowId, rules } of rows) {
    for (const rule of rules) {
      if (rule.kind !== 'recurring') continue;
      const w = occurrenceAt(rule, now);
      if (!w) continue;
      const { rows: added } = await sql<{ id: number }>`
        insert into maintenance_windows (tenant_id, workflow_id, starts_at, ends_at, reason, created_by, recurrence, created_at)
        values (${tenantId}, ${workflowId}, ${w.startsAt}, ${w.endsAt}, ${w.reason}, 'file', ${w.recurrence}, ${now})
        on conflict (tenant_id, coalesce(workflow_id, 0), recurrence, starts_at) where recurrence is not null do nothing
        returning id
      `.execute(deps.db);
      inserted += added.length;
    }
  }
  return inserted;
}

/**
 * Claims ended windows (one CTE under SKIP LOCKED, marked told at claim
 * time, like the poller's claim of finished runs) and, in the same
 * transaction, records one `maintenance_ended` on the open alert of each
 * workflow the window covered, counting the failed and missed ticks that
 * fell inside it. An open warning's escalation deadline moves by the time
 * the window held it, as resuming a pause does, less what an overlapping
 * window told before it already moved it by (newlyHeldMs).
 */
export async function tellEndedWindows(deps: Pick<Deps, 'db' | 'config'>, now: Date): Promise<number> {
  return deps.db.transaction().execute(async (trx) => {
    const { rows: ended } = await sql<WindowRow>`
      with claimed as (
        select id from maintenance_windows
        where told_at is null and ends_at <= ${now}
        order by ends_at, id
        limit ${ENDED_PER_PASS}
        for update skip locked
      )
      update maintenance_windows m set told_at = ${now}
      from claimed where m.id = claimed.id
      returning m.*
    `.execute(trx);
    const events: EventInput[] = [];
    for (const window of ended) events.push(...(await endOf(trx, deps, window, now)));
    await recordAlertEvents(trx, events);
    return ended.length;
  });
}

async function endOf(trx: Transaction<Database>, deps: Pick<Deps, 'config'>, window: WindowRow, now: Date): Promise<EventInput[]> {
  const workflows: Pick<Workflow, 'id'>[] = await trx
    .selectFrom('workflows')
    .select('id')
    .where('tenantId', '=', window.tenantId)
    .where('enabled', '=', true)
    .$if(window.workflowId !== null, (q) => q.where('id', '=', window.workflowId!))
    .execute();
  if (workflows.length === 0) return [];
  const ids = workflows.map((w) => w.id);
  const alerts = await trx.selectFrom('alerts').selectAll().where('workflowId', 'in', ids).where('status', '=', 'open').forUpdate().execute();
  const summary = (c: { failures: number; missed: number } | undefined) => ({
    startedAt: window.startsAt.toISOString(),
    endedAt: window.endsAt.toISOString(),
    ...(window.reason ? { reason: window.reason } : {}),
    failures: c?.failures ?? 0,
    missed: c?.missed ?? 0,
    scope: window.workflowId === null ? ('tenant' as const) : ('workflow' as const),
  });
  if (alerts.length === 0) {
    // A tenant-wide window with no thread to tell: the tenant channel gets the note (src/slack/transport/maintenance-notes.ts).
    if (window.workflowId === null) {
      const [total] = await countTicks(trx, window, ids, false);
      await trx.updateTable('maintenanceWindows').set({ channelNote: JSON.stringify(summary(total)) }).where('id', '=', window.id).execute();
    }
    return [];
  }
  const counts = await countTicks(trx, window, alerts.map((a) => a.workflowId), true);
  const countOf = new Map(counts.map((c) => [c.workflowId, c]));
  const tenant = await trx.selectFrom('tenants').select('channel').where('id', '=', window.tenantId).executeTakeFirstOrThrow();
  const earlier = await earlierWindows(trx, window, alerts);
  const pauses = await pauseEvents(trx, alerts);
  const out: EventInput[] = [];
  for (let alert of alerts) {
    // What earlier windows and the pauses that have ended held of it already moved the deadline.
    const covering = [
      ...earlier.filter((e) => e.workflowId === null || e.workflowId === alert.workflowId).map(heldSpanOf),
      ...endedPauses(
        pauses.filter((e) => e.alertId === alert.id),
        alert.openedAt,
      ),
    ];
    const heldMs = newlyHeldMs(heldSpanOf(window), covering, alert.openedAt);
    if (alert.severity === 'warning' && alert.escalateAt && heldMs > 0) {
      alert = await trx
        .updateTable('alerts')
        .set({ escalateAt: new Date(alert.escalateAt.getTime() + heldMs), updatedAt: now })
        .where('id', '=', alert.id)
        .returningAll()
        .executeTakeFirstOrThrow();
    }
    out.push({ alert, tenant, kind: 'maintenance_ended', actor: null, data: summary(countOf.get(alert.workflowId)), now, config: deps.config });
  }
  return out;
}

/**
 * The windows told before this one (ends_at, then id: the claim's order) that
 * overlap it after the earliest of these alerts opened and cover any of their
 * workflows: what already moved their deadlines (newlyHeldMs).
 */
async function earlierWindows(trx: Transaction<Database>, window: WindowRow, alerts: Pick<Alert, 'workflowId' | 'openedAt'>[]) {
  const from = new Date(Math.min(...alerts.map((a) => a.openedAt.getTime())));
  const { rows } = await sql<Pick<WindowRow, 'workflowId' | 'startsAt' | 'endsAt' | 'createdAt' | 'recurrence'>>`
    select workflow_id as "workflowId", starts_at as "startsAt", ends_at as "endsAt", created_at as "createdAt", recurrence from maintenance_windows
    where tenant_id = ${window.tenantId}
      and (workflow_id is null or workflow_id = any(${alerts.map((a) => a.workflowId)}::bigint[]))
      and (ends_at, id) < (${window.endsAt}::timestamptz, ${window.id}::bigint)
      and ends_at > greatest(${window.startsAt}::timestamptz, ${from}::timestamptz)
      and starts_at < ${window.endsAt}
  `.execute(trx);
  return rows;
}

/** The alerts' `workflow_paused` and `workflow_resumed` events, in order (endedPauses). */
async function pauseEvents(trx: Transaction<Database>, alerts: Pick<Alert, 'id'>[]) {
  return trx
    .selectFrom('alertEvents')
    .select(['alertId', 'kind', 'at'])
    .where(
      'alertId',
      'in',
      alerts.map((a) => a.id),
    )
    .where('kind', 'in', ['workflow_paused', 'workflow_resumed'])
    .orderBy('id')
    .execute();
}

/** Failed and missed ticks inside the window: per workflow, or summed over all of them. */
async function countTicks(trx: Transaction<Database>, window: WindowRow, workflowIds: number[], perWorkflow: boolean) {
  return trx
    .selectFrom('runs')
    .select([
      sql<number>`${perWorkflow ? sql`workflow_id` : sql`0`}`.as('workflowId'),
      sql<number>`count(*) filter (where status = 'failed')::int`.as('failures'),
      sql<number>`count(*) filter (where status = 'missed')::int`.as('missed'),
    ])
    .where('workflowId', 'in', workflowIds)
    .where('originalRunId', 'is', null)
    .where('tick', '>=', window.startsAt)
    .where('tick', '<', window.endsAt)
    .$if(perWorkflow, (q) => q.groupBy('workflowId'))
    .execute();
}
