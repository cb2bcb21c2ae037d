import type { Db } from '../db/connect.js';
import type { Alert, AlertEvent, Run, Tenant, Workflow } from '../db/schema.js';
import { profileFor, type CadenceProfile } from '../domain/cadence.js';

/** Read models for Slack, the API and the dashboard. Stable: others build on them. */

export interface Scope {
  /** undefined: platform scope (every tenant); otherwise only this tenant's rows. */
  tenantId?: string;
}

export interface AlertView {
  alert: Alert;
  workflow: Workflow;
  tenant: Tenant;
  /** The policy in force now (derived and effective side by side), computed at the alert's last update. */
  profile: CadenceProfile;
  events: AlertEvent[];
}

export async function findOpenAlertForWorkflow(db: Db, workflowId: number): Promise<Alert | undefined> {
  return db.selectFrom('alerts').selectAll().where('workflowId', '=', workflowId).where('status', '=', 'open').executeTakeFirst();
}

export async function getAlertView(db: Db, alertId: number): Promise<AlertView | undefined> {
  const alert = await db.selectFrom('alerts').selectAll().where('id', '=', alertId).executeTakeFirst();
  if (!alert) return undefined;
  const workflow = await db.selectFrom('workflows').selectAll().where('id', '=', alert.workflowId).executeTakeFirstOrThrow();
  const tenant = await db.selectFrom('tenants').selectAll().where('id', '=', workflow.tenantId).executeTakeFirstOrThrow();
  const events = await db.selectFrom('alertEvents').selectAll().where('alertId', '=', alertId).orderBy('id').execute();
  const profile = profileFor(workflow.cron, workflow.timezone, workflow.policy, alert.updatedAt);
  return { alert, workflow, tenant, profile, events };
}

export interface OpenAlertRow {
  alert: Alert;
  workflow: Pick<Workflow, 'id' | 'name' | 'tenantId'>;
  tenant: Pick<Tenant, 'id' | 'name' | 'channel'>;
}

/** Open alerts, critical first, oldest first within a severity. */
export async function listOpenAlerts(db: Db, scope: Scope): Promise<OpenAlertRow[]> {
  const alerts = await db
    .selectFrom('alerts')
    .innerJoin('workflows', 'workflows.id', 'alerts.workflowId')
    .selectAll('alerts')
    .where('alerts.status', '=', 'open')
    .$if(scope.tenantId !== undefined, (q) => q.where('workflows.tenantId', '=', scope.tenantId!))
    .orderBy('alerts.severity', 'asc') // 'critical' < 'warning'
    .orderBy('alerts.openedAt', 'asc')
    .execute();
  if (alerts.length === 0) return [];
  const workflows = await db
    .selectFrom('workflows')
    .select(['id', 'name', 'tenantId'])
    .where(
      'id',
      'in',
      alerts.map((a) => a.workflowId),
    )
    .execute();
  const tenants = await db
    .selectFrom('tenants')
    .select(['id', 'name', 'channel'])
    .where(
      'id',
      'in',
      workflows.map((w) => w.tenantId),
    )
    .execute();
  const wById = new Map(workflows.map((w) => [w.id, w]));
  const tById = new Map(tenants.map((t) => [t.id, t]));
  return alerts.map((alert) => {
    const workflow = wById.get(alert.workflowId)!;
    return { alert, workflow, tenant: tById.get(workflow.tenantId)! };
  });
}

export interface TickHistory {
  /** The tick's original row (or a manual run's only row). */
  run: Run;
  status: Run['status'];
  outcomeNote: string | null;
  error: string | null;
  /** Every attempt of the tick, oldest first, each with its own outcome (the original row first). */
  attempts: { runId: number; attempt: number; trigger: Run['trigger']; status: string; error: string | null; startedAt: Date | null; finishedAt: Date | null }[];
}

/** The workflow's last ticks (and manual runs), newest first, with every attempt underneath. */
export async function workflowHistory(db: Db, workflowId: number, limit = 20): Promise<TickHistory[]> {
  const originals = await db
    .selectFrom('runs')
    .selectAll()
    .where('workflowId', '=', workflowId)
    .where('originalRunId', 'is', null)
    .orderBy((eb) => eb.fn.coalesce('tick', 'startedAt', 'createdAt'), 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  if (originals.length === 0) return [];
  const retries = await db
    .selectFrom('runs')
    .selectAll()
    .where(
      'originalRunId',
      'in',
      originals.map((r) => r.id),
    )
    .orderBy('attempt')
    .execute();
  return originals.map((run) => {
    const own = {
      runId: run.id,
      attempt: run.attempt,
      trigger: run.trigger,
      status: run.attemptStatus ?? run.status,
      error: run.attemptError ?? run.error,
      startedAt: run.startedAt,
      finishedAt: run.finishedAt,
    };
    const more = retries
      .filter((r) => r.originalRunId === run.id)
      .map((r) => ({ runId: r.id, attempt: r.attempt, trigger: r.trigger, status: r.attemptStatus ?? r.status, error: r.attemptError ?? r.error, startedAt: r.startedAt, finishedAt: r.finishedAt }));
    return { run, status: run.status, outcomeNote: run.outcomeNote, error: run.error, attempts: [own, ...more] };
  });
}
