import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { Alert } from '../db/schema.js';
import type { AlertDependency } from '../domain/dependencies.js';

/**
 * Read models of workflow dependencies (docs/alerts.md): what an alert's root
 * shows, and which workflows are held back by an upstream incident right now
 * (`/scheduler status`, App Home, the digest, the read API).
 */

/** How many downstream workflows the alert holds back, and the upstream incident it is linked to (named only within its tenant). */
export async function alertDependency(db: Db, alert: Pick<Alert, 'id' | 'upstreamAlertId'>, tenantId: string): Promise<AlertDependency | undefined> {
  const affected = await db
    .selectFrom('upstreamBlocks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('upstreamAlertId', '=', alert.id)
    .executeTakeFirst();
  const upstream = await upstreamOf(db, alert.upstreamAlertId);
  const n = Number(affected?.n ?? 0);
  if (!n && !upstream) return undefined;
  return {
    ...(n ? { affected: n } : {}),
    ...(upstream ? { upstream: { alertId: Number(upstream.id), workflow: upstream.tenant === tenantId ? upstream.workflow : null, open: upstream.status === 'open' } } : {}),
  };
}

/** The upstream incident an alert is linked to, with its workflow and tenant; undefined when there is none. Callers decide what a viewer is shown. */
async function upstreamOf(db: Db, upstreamAlertId: number | null) {
  if (!upstreamAlertId) return undefined;
  return db
    .selectFrom('alerts as a')
    .innerJoin('workflows as w', 'w.id', 'a.workflowId')
    .select(['a.id', 'a.status', 'w.tenantId as tenant', 'w.name as workflow'])
    .where('a.id', '=', upstreamAlertId)
    .executeTakeFirst();
}

/** A workflow held back by an open upstream incident. `upstream.workflow` null: another tenant's, and the viewer is not the platform. */
export interface BlockedWorkflow {
  workflowId: number;
  tenantId: string;
  name: string;
  since: Date;
  failures: number;
  missed: number;
  upstream: { alertId: number; tenantId: string; workflow: string };
}

/**
 * Workflows held back right now: a block whose upstream alert is still open,
 * and no success of the workflow since its last held-back failure.
 * `tenantId`: only that tenant's workflows.
 */
export async function blockedWorkflows(db: Db, tenantId?: string): Promise<BlockedWorkflow[]> {
  const rows = await db
    .selectFrom('upstreamBlocks as b')
    .innerJoin('alerts as ua', 'ua.id', 'b.upstreamAlertId')
    .innerJoin('workflows as uw', 'uw.id', 'ua.workflowId')
    .innerJoin('workflows as w', 'w.id', 'b.workflowId')
    .select(['b.workflowId', 'w.tenantId', 'w.name', 'b.since', 'b.failures', 'b.missed', 'ua.id as alertId', 'uw.tenantId as upstreamTenant', 'uw.name as upstreamName'])
    .where('ua.status', '=', 'open')
    .where('w.enabled', '=', true)
    // A downstream that has succeeded since its last held-back failure is not blocked any more.
    .where(sql<boolean>`not exists (select 1 from runs r where r.workflow_id = b.workflow_id and r.original_run_id is null and r.status = 'succeeded' and r.finished_at > b.last_at)`)
    .$if(tenantId !== undefined, (q) => q.where('w.tenantId', '=', tenantId!))
    .orderBy('w.tenantId')
    .orderBy('w.name')
    .execute();
  return rows.map((r) => ({
    workflowId: r.workflowId,
    tenantId: r.tenantId,
    name: r.name,
    since: r.since,
    failures: r.failures,
    missed: r.missed,
    upstream: { alertId: Number(r.alertId), tenantId: r.upstreamTenant, workflow: r.upstreamName },
  }));
}

/** How the upstream is named to a viewer: tenant/name for the platform, its name within the tenant, else not at all. */
export function upstreamLabel(b: BlockedWorkflow, viewerTenant: string | undefined): string {
  if (viewerTenant === undefined) return b.upstream.tenantId === b.tenantId ? b.upstream.workflow : `${b.upstream.tenantId}/${b.upstream.workflow}`;
  return b.upstream.tenantId === viewerTenant ? b.upstream.workflow : "another tenant's workflow";
}

/**
 * The read API's view of an alert's dependencies: the downstream workflows it
 * held back (a tenant token sees its own tenant's only, the rest counted) and
 * the upstream incident it is linked to (hidden from a tenant token when it is
 * another tenant's).
 */
export async function alertDependencyDetail(db: Db, alert: { id: number; upstreamAlertId: number | null }, scopeTenant: string | undefined) {
  const rows = await db
    .selectFrom('upstreamBlocks as b')
    .innerJoin('workflows as w', 'w.id', 'b.workflowId')
    .select(['w.tenantId as tenant', 'w.name as workflow', 'b.since', 'b.lastAt', 'b.failures', 'b.missed'])
    .where('b.upstreamAlertId', '=', alert.id)
    .orderBy('b.since')
    .orderBy('w.name')
    .execute();
  const visible = rows.filter((r) => scopeTenant === undefined || r.tenant === scopeTenant);
  const upstream = await upstreamOf(db, alert.upstreamAlertId);
  const shownUpstream = upstream && (scopeTenant === undefined || upstream.tenant === scopeTenant) ? { alertId: Number(upstream.id), tenant: upstream.tenant, workflow: upstream.workflow, status: upstream.status } : null;
  return {
    affected: visible,
    ...(visible.length < rows.length ? { affectedInOtherTenants: rows.length - visible.length } : {}),
    upstream: shownUpstream ?? (upstream ? { otherTenant: true } : null),
  };
}
