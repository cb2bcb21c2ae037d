import type { Kysely, Transaction } from 'kysely';
import type { Database, Tenant, Workflow } from '../db/schema.js';
import { maintenanceAt, recurringRules, type MaintenanceRule } from '../domain/maintenance.js';
import type { OneOffWindow } from './batch-claim.js';

type Reader = Kysely<Database> | Transaction<Database>;

/**
 * Every maintenance rule that can apply to each workflow at or after `since`:
 * its own recurring rules, its tenant's, and the one-off windows (the
 * workflow's and the tenant-wide ones) that have not ended by then. Recorded
 * occurrences of recurring rules are left out: the rules themselves say the
 * same. Two statements whatever the number of workflows (the poller's claim
 * reads the same with the runs it claims: `claimBatch`).
 */
export async function loadMaintenanceRules(
  db: Reader,
  workflows: Pick<Workflow, 'id' | 'tenantId' | 'maintenance'>[],
  since: Date,
): Promise<Map<number, MaintenanceRule[]>> {
  const out = new Map<number, MaintenanceRule[]>();
  if (workflows.length === 0) return out;
  const tenantIds = [...new Set(workflows.map((w) => w.tenantId))];
  const tenants = await db.selectFrom('tenants').select(['id', 'maintenance']).where('id', 'in', tenantIds).execute();
  const oneOff = await db
    .selectFrom('maintenanceWindows')
    .selectAll()
    .where('tenantId', 'in', tenantIds)
    .where('recurrence', 'is', null)
    .where('endsAt', '>', since)
    .execute();
  const tenantBy = new Map(tenants.map((t) => [t.id, t]));
  for (const w of workflows) {
    const windows = oneOff
      .filter((row) => row.tenantId === w.tenantId && (row.workflowId === null || row.workflowId === w.id))
      .map((row) => ({ startsAt: row.startsAt, endsAt: row.endsAt, reason: row.reason, tenantWide: row.workflowId === null }));
    out.set(w.id, workflowRules(w, tenantBy.get(w.tenantId), windows));
  }
  return out;
}

/** The ids of the workflows (of those given) that are in maintenance at `now`. */
export async function workflowsInMaintenance(db: Reader, workflows: Pick<Workflow, 'id' | 'tenantId' | 'maintenance'>[], now: Date): Promise<number[]> {
  const rules = await loadMaintenanceRules(db, workflows, now);
  return workflows.filter((w) => maintenanceAt(rules.get(w.id) ?? [], now) !== null).map((w) => w.id);
}

/**
 * Every maintenance rule that can apply to a workflow: its own recurring
 * rules, its tenant's, and the one-off windows given (its own and its
 * tenant's, as `loadMaintenanceRules` or the poller's claim read them).
 */
export function workflowRules(workflow: Pick<Workflow, 'maintenance'>, tenant: Pick<Tenant, 'maintenance'> | undefined, oneOff: readonly OneOffWindow[]): MaintenanceRule[] {
  return [
    ...recurringRules(workflow.maintenance, 'workflow'),
    ...recurringRules(tenant?.maintenance, 'tenant'),
    ...oneOff.map((w): MaintenanceRule => ({ kind: 'once', startsAt: w.startsAt, endsAt: w.endsAt, reason: w.reason, scope: w.tenantWide ? 'tenant' : 'workflow' })),
  ];
}

/**
 * The ids of the alerts (of those given) whose workflow had a window end
 * that is not told yet (told_at null: another replica's maintenance clock
 * holds it, or more ended than one pass tells) after the alert opened. Its
 * end will move the warning's deadline by the time it held it; judged on
 * the old deadline before then, the warning would escalate for time the
 * window held.
 */
export async function alertsAwaitingWindowEnd(db: Reader, alerts: { id: number; openedAt: Date; workflow: Pick<Workflow, 'id' | 'tenantId'> }[], now: Date): Promise<Set<number>> {
  if (alerts.length === 0) return new Set();
  const ended = await db
    .selectFrom('maintenanceWindows')
    .select(['tenantId', 'workflowId', 'endsAt'])
    .where('tenantId', 'in', [...new Set(alerts.map((a) => a.workflow.tenantId))])
    .where('toldAt', 'is', null)
    .where('endsAt', '<=', now)
    .execute();
  const held = alerts.filter((a) =>
    ended.some((w) => w.tenantId === a.workflow.tenantId && (w.workflowId === null || w.workflowId === a.workflow.id) && w.endsAt.getTime() > a.openedAt.getTime()),
  );
  return new Set(held.map((a) => a.id));
}
