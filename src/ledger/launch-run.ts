import type { Run, Tenant, Workflow } from '../db/schema.js';
import type { Deps } from '../deps.js';
import type { LaunchContext, LaunchOutcome } from '../launcher.js';
import { takeRunLease } from './run-leases.js';
import { finishRun } from './runs.js';
import { tickHeldBack } from '../domain/watched.js';
import { launchRefusalError } from '../domain/launch-answer.js';

/**
 * Hands a committed `running` row to the workflow's launcher. Never call it
 * inside a transaction. When there is no launcher or the launch is refused, the
 * run ends at once as failed with the reason, so the engine sees it (a refusal
 * before sending worded as permanent, so its tick is not retried).
 */
export async function launchRun(deps: Deps, run: Run, workflow: Workflow, tenant: Pick<Tenant, 'id' | 'name'>, timeoutSeconds: number): Promise<void> {
  // The last look before anything starts. The row was committed a moment ago, or a long one: a replica that
  // stalled after its commit (a GC pause, a frozen VM, a stalled connection) for longer than the lease may find
  // the run failed as "worker lost" and its next attempt launched by another replica. Only a row still running
  // and still this replica's is launched; the lease taken here gives the launch a whole lease period.
  const look = run.trigger === 'schedule' ? await takeTickLease(deps, run.id, deps.clock.now()) : (await takeRunLease(deps, run.id, deps.clock.now())) === 0 ? 'lost' : 'taken';
  if (look !== 'taken') {
    if (look === 'lost') deps.logger.warn({ runId: run.id, workflowId: workflow.id, attempt: run.attempt }, 'run not launched: it ended or became another replica\'s while this replica stalled');
    else deps.logger.info({ runId: run.id, workflowId: workflow.id, tick: run.tick, note: look.heldBack }, 'tick not launched: its workflow may no longer fire');
    return;
  }
  const launcher = deps.launchers(workflow);
  if (!launcher) {
    await finishRun(deps, run.id, { status: 'failed', error: 'no launcher configured for this workflow' });
    return;
  }
  const ctx: LaunchContext = { runId: run.id, workflow, tenant, tick: run.tick, attempt: run.attempt, trigger: run.trigger, timeoutSeconds };
  let outcome: LaunchOutcome;
  try {
    outcome = await launcher.launch(ctx);
  } catch (error) {
    outcome = { started: false, error: error instanceof Error ? error.message : String(error) };
  }
  if (outcome.started) return;
  await finishRun(deps, run.id, { status: 'failed', error: 'refusal' in outcome ? launchRefusalError(outcome.refusal) : `launch failed: ${outcome.error}` });
}

type LeaseDeps = Pick<Deps, 'db' | 'clock' | 'replicaId'>;

/**
 * A scheduled tick's last look before its launch, in the statement that
 * takes its lease: the row still `running` and this replica's (or nobody's),
 * and its workflow still enabled and not paused, its tenant enabled. The tick
 * scheduler's claim checked them under lock, but launches come after its
 * commit, up to a batch's worth of launches later (or a stall later): a pause
 * or disable committed since is honoured here, and the tick recorded
 * `skipped` saying why (`tickHeldBack`), never launched. Read as committed
 * when the statement starts, without locking the workflow or tenant (a
 * poller holds a workflow's row for its whole batch: a launch must not wait
 * on it); a pause committing after this look is after the launch, as for any
 * run already in flight when a workflow is paused.
 */
async function takeTickLease(deps: LeaseDeps, runId: number, now: Date): Promise<'taken' | 'lost' | { heldBack: string }> {
  if ((await takeRunLease(deps, runId, now, { whileItMayFire: true })) > 0) return 'taken';
  // Not taken: the row is no longer this replica's, or the workflow may no longer fire (then the row is still ours to settle).
  const facts = await deps.db
    .selectFrom('runs as r')
    .innerJoin('workflows as w', 'w.id', 'r.workflowId')
    .innerJoin('tenants as t', 't.id', 'w.tenantId')
    .select(['w.enabled', 'w.paused', 't.enabled as tenantEnabled'])
    .where('r.id', '=', runId)
    .where('r.status', '=', 'running')
    .where((eb) => eb.or([eb('r.leaseOwner', '=', deps.replicaId), eb('r.leaseOwner', 'is', null)]))
    .executeTakeFirst();
  if (!facts) return 'lost';
  const heldBack = tickHeldBack(facts, { enabled: facts.tenantEnabled });
  // Resumed or enabled again between the two statements: an ordinary launch.
  if (!heldBack) return (await takeRunLease(deps, runId, now)) === 0 ? 'lost' : 'taken';
  const skipped = await deps.db
    .updateTable('runs')
    .set({ status: 'skipped', outcomeNote: heldBack, finishedAt: now, processedAt: now, startedAt: null, deadlineAt: null, leaseOwner: null, leaseExpiresAt: null })
    .where('id', '=', runId)
    .where('status', '=', 'running')
    .where((eb) => eb.or([eb('leaseOwner', '=', deps.replicaId), eb('leaseOwner', 'is', null)]))
    .executeTakeFirst();
  return Number(skipped.numUpdatedRows) > 0 ? { heldBack } : 'lost';
}
