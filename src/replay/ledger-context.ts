import type { Db } from '../db/connect.js';
import { replayActor, type OpenAtStart } from '../domain/replay-window.js';
import { durationOf, MAX_TEXT } from './ledger-ticks.js';
import type { ScenarioInput } from './scenario.js';

/**
 * What the ledger says around its scheduled ticks that a replay needs too:
 * the alerts already open when the period starts (src/domain/replay-window.ts
 * decides how far back the replay starts to rebuild them), and the manual
 * runs, replayed as the run-now actions that started them.
 */

type Action = NonNullable<ScenarioInput['actions']>[number];

/** The selected workflows' alerts open at `since`, each with where its failure streak began. */
export async function openAlertsAt(db: Db, workflows: { id: number; name: string }[], since: Date): Promise<OpenAtStart[]> {
  const alerts = await db
    .selectFrom('alerts')
    .select(['workflowId', 'openedAt'])
    .where('workflowId', 'in', workflows.map((w) => w.id))
    .where('openedAt', '<', since)
    .where((eb) => eb.or([eb('resolvedAt', 'is', null), eb('resolvedAt', '>', since)]))
    .execute();
  const out: OpenAtStart[] = [];
  for (const alert of alerts) {
    const original = db.selectFrom('runs').where('workflowId', '=', alert.workflowId).where('originalRunId', 'is', null).where('tick', 'is not', null);
    const success = await original.select('tick').where('status', '=', 'succeeded').where('tick', '<', alert.openedAt).orderBy('tick', 'desc').limit(1).executeTakeFirst();
    const first = await original.select('tick').orderBy('tick').limit(1).executeTakeFirst();
    out.push({ workflow: workflows.find((w) => w.id === alert.workflowId)!.name, openedAt: alert.openedAt, lastSuccessTick: success?.tick ?? null, firstTick: first?.tick ?? null });
  }
  return out;
}

/**
 * The manual runs started in the period, as run-now actions in the tenant's
 * channel at the moment each started, by whoever asked (a stand-in when it was
 * not a Slack user: the API), with the outcome it had. A run still going at
 * the end is left out, as a scheduled one is.
 */
export async function manualRunActions(db: Db, workflows: { id: number; name: string }[], channel: string, since: Date, until: Date): Promise<Action[]> {
  const runs = await db
    .selectFrom('runs')
    .select(['workflowId', 'status', 'error', 'stage', 'rows', 'requestedBy', 'startedAt', 'finishedAt', 'durationSeconds', 'createdAt'])
    .where('workflowId', 'in', workflows.map((w) => w.id))
    .where('trigger', '=', 'manual')
    .where('tick', 'is', null)
    .where('originalRunId', 'is', null)
    .where('status', 'in', ['succeeded', 'failed'])
    .where((eb) => eb.fn.coalesce('startedAt', 'createdAt'), '>=', since)
    .where((eb) => eb.fn.coalesce('startedAt', 'createdAt'), '<=', until)
    .orderBy((eb) => eb.fn.coalesce('startedAt', 'createdAt'))
    .execute();
  return runs.map((r) => {
    const durationSeconds = durationOf(r);
    const outcome =
      r.status === 'succeeded'
        ? { status: 'succeeded' as const, durationSeconds, ...(r.rows !== null ? { rows: r.rows } : {}) }
        : { status: 'failed' as const, durationSeconds, ...(r.error ? { error: r.error.slice(0, MAX_TEXT) } : {}), ...(r.stage ? { stage: r.stage.slice(0, MAX_TEXT) } : {}), ...(r.rows !== null ? { rows: r.rows } : {}) };
    return { at: (r.startedAt ?? r.createdAt).toISOString(), user: replayActor(r.requestedBy), channel, action: 'run_now' as const, workflow: workflows.find((w) => w.id === r.workflowId)!.name, outcome };
  });
}

type Window = NonNullable<ScenarioInput['maintenance']>[number];

/**
 * The maintenance windows over the selected workflows (theirs, and the
 * tenant's) that reach into the period, each set again when it was set (at
 * the period's start, for one set before). A recurring rule's occurrences are
 * in the ledger as rows too, and are replayed as the windows they were.
 */
export async function maintenanceWindows(db: Db, tenant: string, workflows: { id: number; name: string }[], since: Date, until: Date): Promise<Window[]> {
  const rows = await db
    .selectFrom('maintenanceWindows')
    .select(['workflowId', 'startsAt', 'endsAt', 'reason', 'createdAt'])
    .where('tenantId', '=', tenant)
    .where((eb) => eb.or([eb('workflowId', 'is', null), eb('workflowId', 'in', workflows.map((w) => w.id))]))
    .where('endsAt', '>=', since)
    .where('startsAt', '<=', until)
    .where('createdAt', '<=', until)
    .orderBy('createdAt')
    .orderBy('id')
    .execute();
  return rows.map((w) => ({
    at: new Date(Math.max(w.createdAt.getTime(), since.getTime())).toISOString(),
    tenant,
    ...(w.workflowId !== null ? { workflow: workflows.find((x) => x.id === w.workflowId)!.name } : {}),
    startsAt: w.startsAt.toISOString(),
    endsAt: w.endsAt.toISOString(),
    ...(w.reason ? { reason: w.reason.slice(0, 500) } : {}),
  }));
}
