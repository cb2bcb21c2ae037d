import type { Kysely, Transaction } from 'kysely';
import type { Database, Tenant, Workflow } from '../db/schema.js';
import { maintenanceAt, recurringRules, type MaintenanceRule } from '../domain/maintenance.js';

type Reader = Kysely<Database> | Transaction<Database>;

/**
 * Every maintenance rule that can apply to each workflow at or after `since`:
 * its own recurring rules, its tenant's, and the one-off windows (the
 * workflow's and the tenant-wide ones) that have not ended by then. Recorded
 * occurrences of recurring rules are left out: the rules themselves say the
 * same. Two statements whatever the number of workflows (one when the tenants are given).
 */
export async function loadMaintenanceRules(
  db: Reader,
  workflows: Pick<Workflow, 'id' | 'tenantId' | 'maintenance'>[],
  since: Date,
  /** The workflows' tenants when the caller has read them already (the poller's claim): one statement fewer. */
  known?: Pick<Tenant, 'id' | 'maintenance'>[],
): Promise<Map<number, MaintenanceRule[]>> {
  const out = new Map<number, MaintenanceRule[]>();
  if (workflows.length === 0) return out;
  const tenantIds = [...new Set(workflows.map((w) => w.tenantId))];
  const tenants = known ?? (await db.selectFrom('tenants').select(['id', 'maintenance']).where('id', 'in', tenantIds).execute());
  const oneOff = await db
    .selectFrom('maintenanceWindows')
    .selectAll()
    .where('tenantId', 'in', tenantIds)
    .where('recurrence', 'is', null)
    .where('endsAt', '>', since)
    .execute();
  const tenantRules = new Map(tenants.map((t) => [t.id, recurringRules(t.maintenance, 'tenant')]));
  for (const w of workflows) {
    const rules: MaintenanceRule[] = [...recurringRules(w.maintenance, 'workflow'), ...(tenantRules.get(w.tenantId) ?? [])];
    for (const row of oneOff) {
      if (row.tenantId !== w.tenantId || (row.workflowId !== null && row.workflowId !== w.id)) continue;
      rules.push({ kind: 'once', startsAt: row.startsAt, endsAt: row.endsAt, reason: row.reason, scope: row.workflowId === null ? 'tenant' : 'workflow' });
    }
    out.set(w.id, rules);
  }
  return out;
}

/** The ids of the workflows (of those given) that are in maintenance at `now`. */
export async function workflowsInMaintenance(db: Reader, workflows: Pick<Workflow, 'id' | 'tenantId' | 'maintenance'>[], now: Date): Promise<number[]> {
  const rules = await loadMaintenanceRules(db, workflows, now);
  return workflows.filter((w) => maintenanceAt(rules.get(w.id) ?? [], now) !== null).map((w) => w.id);
}
