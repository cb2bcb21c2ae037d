import type { Transaction } from 'kysely';
import type { Database, Run, Workflow } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { profileFor } from '../domain/cadence.js';
import { fireTimesBetween, latestFireAtOrBefore, nextFireAfter } from '../domain/schedule.js';
import type { LoopSpec } from '../engine/runner.js';
import { insertRunningRun, launchRun } from '../services/runs.js';

/** Workflows handled per loop tick before the runner gets a say (it calls again at once while work is found). */
const BATCH = 20;
/** After a long outage only this many older ticks are written as skipped; the rest are counted in the log. */
const MAX_SKIPPED_ROWS = 1_000;

interface FiredTick {
  workflow: Workflow;
  tenant: { id: string; name: string };
  /** The original row of the fired tick; undefined when the tick already had one (nothing to launch). */
  run: Run | undefined;
  skipped: number;
  timeoutSeconds: number;
}

/**
 * Fires every due tick of managed workflows exactly once across replicas:
 * each workflow row is claimed with FOR UPDATE SKIP LOCKED, its tick's
 * original row inserted (the unique index on (workflow, tick) is the second
 * guard), and next_tick_at advanced, all in one transaction; the launch
 * happens after commit. A replica that dies between commit and launch leaves
 * a leased `running` row that the freshness detector fails as "worker lost".
 */
export async function fireDueTicks(deps: Deps): Promise<boolean> {
  let found = false;
  for (let i = 0; i < BATCH; i++) {
    const now = deps.clock.now();
    const fired = await deps.db.transaction().execute((trx) => claimDueTick(trx, deps, now));
    if (!fired) break;
    found = true;
    if (fired.skipped > 0) deps.logger.info({ workflow: fired.workflow.name, tenant: fired.tenant.id, skipped: fired.skipped }, 'ticks due while nothing was running recorded as skipped');
    if (fired.run) await launchRun(deps, fired.run, fired.workflow, fired.tenant, fired.timeoutSeconds);
  }
  if (found) return true;
  return sleepUntilNextDue(deps);
}

async function claimDueTick(trx: Transaction<Database>, deps: Deps, now: Date): Promise<FiredTick | undefined> {
  const row = await trx
    .selectFrom('workflows')
    .innerJoin('tenants', 'tenants.id', 'workflows.tenantId')
    .selectAll('workflows')
    .select('tenants.name as tenantName')
    .where('workflows.enabled', '=', true)
    .where('workflows.paused', '=', false)
    .where('workflows.mode', '=', 'managed')
    .where('workflows.nextTickAt', '<=', now)
    .where('tenants.enabled', '=', true)
    .orderBy('workflows.nextTickAt')
    .limit(1)
    .forUpdate('workflows')
    .skipLocked()
    .executeTakeFirst();
  if (!row) return undefined;
  const { tenantName, ...workflow } = row;
  const tenant = { id: workflow.tenantId, name: tenantName };
  const scheduled = workflow.nextTickAt!;

  // Only the latest due tick fires; older ones fell while no scheduler ran (or
  // while the workflow was paused) and are recorded as skipped, not failed.
  const latestFire = latestFireAtOrBefore(workflow.cron, workflow.timezone, now);
  const latest = latestFire && latestFire > scheduled ? latestFire : scheduled;
  const older = [scheduled, ...fireTimesBetween(workflow.cron, workflow.timezone, scheduled, new Date(latest.getTime() - 1), MAX_SKIPPED_ROWS + 1)]
    .filter((t) => t < latest)
    .slice(-MAX_SKIPPED_ROWS);
  if (older.length > 0) {
    await trx
      .insertInto('runs')
      .values(older.map((tick) => skippedRow(workflow.id, tick, now)))
      .onConflict((oc) => oc.columns(['workflowId', 'tick']).where('originalRunId', 'is', null).where('tick', 'is not', null).doNothing())
      .execute();
  }

  const profile = profileFor(workflow.cron, workflow.timezone, workflow.policy, now);
  const run = await insertRunningRun(
    trx,
    { workflow, tick: latest, trigger: 'schedule', timeoutSeconds: profile.timeoutSeconds, leaseOwner: deps.replicaId },
    now,
  );
  // Strictly after now: `latest` is at or before now, so this is the first tick still to come.
  const nextTickAt = nextFireAfter(workflow.cron, workflow.timezone, now);
  await trx.updateTable('workflows').set({ nextTickAt }).where('id', '=', workflow.id).execute();
  return { workflow: { ...workflow, nextTickAt }, tenant, run, skipped: older.length, timeoutSeconds: profile.timeoutSeconds };
}

function skippedRow(workflowId: number, tick: Date, now: Date) {
  return {
    workflowId,
    tick,
    trigger: 'schedule' as const,
    status: 'skipped' as const,
    attemptStatus: null,
    attemptError: null,
    startedAt: null,
    finishedAt: now,
    deadlineAt: null,
    originalRunId: null,
    error: null,
    errorGroup: null,
    stage: null,
    rows: null,
    exitCode: null,
    logExcerpt: null,
    logUrl: null,
    outcomeNote: 'not fired: the scheduler was not running at this tick; only the latest due tick runs after a gap',
    requestedBy: null,
    externalId: null,
    // Nothing to evaluate: skipped ticks are neither successes nor failures.
    processedAt: now,
    leaseOwner: null,
    leaseExpiresAt: null,
  };
}

/**
 * When the next tick of any managed workflow falls inside the loop interval,
 * wait for exactly that moment instead of up to a whole interval, so a tick
 * fires on its second rather than within one.
 */
async function sleepUntilNextDue(deps: Deps): Promise<boolean> {
  const now = deps.clock.now();
  const intervalMs = deps.config.TICK_INTERVAL_SECONDS * 1000;
  const next = await deps.db
    .selectFrom('workflows')
    .innerJoin('tenants', 'tenants.id', 'workflows.tenantId')
    .select((eb) => eb.fn.min('workflows.nextTickAt').as('at'))
    .where('workflows.enabled', '=', true)
    .where('workflows.paused', '=', false)
    .where('workflows.mode', '=', 'managed')
    .where('tenants.enabled', '=', true)
    .executeTakeFirst();
  const at = next?.at ? new Date(next.at) : undefined;
  if (!at) return false;
  const wait = at.getTime() - now.getTime();
  if (wait <= 0 || wait >= intervalMs) return false;
  await deps.clock.sleep(wait);
  return true;
}

export function tickSchedulerLoop(deps: Deps): LoopSpec {
  return {
    name: 'tick-scheduler',
    intervalMs: deps.config.TICK_INTERVAL_SECONDS * 1000,
    tick: () => fireDueTicks(deps),
  };
}
