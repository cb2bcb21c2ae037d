import type { Db } from '../../db/connect.js';
import type { Alert, Tenant, Workflow } from '../../db/schema.js';
import type { LauncherResolver } from '../../launcher.js';
import type { AlertCard } from '../blocks/alert-card.js';
import { alertDependency } from '../../ledger/dependency-state.js';

/**
 * The alert as a root message shows it, with the id of the newest event it
 * reflects. The event id is read before the alert row, so the state rendered
 * is at least as new as the id recorded for it (never claims more than it shows).
 */
export async function loadAlertCard(db: Db, launchers: LauncherResolver, alertId: number): Promise<{ card: AlertCard; eventId: number } | undefined> {
  const latest = await db
    .selectFrom('alertEvents')
    .select((eb) => eb.fn.max('id').as('id'))
    .where('alertId', '=', alertId)
    .executeTakeFirst();
  const alert = await db.selectFrom('alerts').selectAll().where('id', '=', alertId).executeTakeFirst();
  if (!alert) return undefined;
  const workflow = await db.selectFrom('workflows').selectAll().where('id', '=', alert.workflowId).executeTakeFirstOrThrow();
  const tenant = await db.selectFrom('tenants').selectAll().where('id', '=', workflow.tenantId).executeTakeFirstOrThrow();
  return { card: await cardFrom(db, launchers, alert, workflow, tenant), eventId: Number(latest?.id ?? 0) };
}

export async function cardFrom(db: Db, launchers: LauncherResolver, alert: Alert, workflow: Workflow, tenant: Tenant): Promise<AlertCard> {
  const lastRun = alert.lastRunId
    ? await db.selectFrom('runs').select(['id', 'logExcerpt', 'logUrl', 'stage']).where('id', '=', alert.lastRunId).executeTakeFirst()
    : undefined;
  // A resolved root shows the resolving event's own text.
  const resolution =
    alert.status === 'resolved'
      ? await db.selectFrom('alertEvents').select(['kind', 'actor', 'at', 'data']).where('alertId', '=', alert.id).where('kind', '=', 'resolved').orderBy('id', 'desc').limit(1).executeTakeFirst()
      : undefined;
  // An open alert a cause opened (a completion deadline, a run running long): the root says what, from its opening.
  const opening =
    alert.status === 'open' && alert.cause
      ? await db.selectFrom('alertEvents').select(['kind', 'actor', 'at', 'data']).where('alertId', '=', alert.id).where('kind', '=', 'opened').orderBy('id').limit(1).executeTakeFirst()
      : undefined;
  const dependency = await alertDependency(db, alert, workflow.tenantId);
  const manualRun = alert.status === 'open' ? await manualRunUnderWay(db, alert) : undefined;
  return {
    alert,
    workflow,
    tenant,
    lastRun: lastRun ?? null,
    hasLauncher: !!launchers(workflow),
    resolution: resolution ?? null,
    ...(opening ? { opening } : {}),
    ...(dependency ? { dependency } : {}),
    ...(manualRun ? { manualRun } : {}),
  };
}

/**
 * A Run now still going, started while the alert is open. Its start and its end are alert events
 * (`run_requested`, `run_finished`), so the root is re-rendered when it appears and when it goes.
 */
function manualRunUnderWay(db: Db, alert: Alert) {
  return db
    .selectFrom('runs')
    .select(['id', 'requestedBy', 'startedAt'])
    .where('workflowId', '=', alert.workflowId)
    .where('status', '=', 'running')
    .where('trigger', '=', 'manual')
    .where('startedAt', '>=', alert.openedAt)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}
