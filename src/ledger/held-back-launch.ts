import type { Deps } from '../deps.js';
import type { Run } from '../db/schema.js';
import { takeRunLease } from './run-leases.js';
import { verdictColumns } from './runs.js';
import { launchHeldBack } from '../domain/watched.js';

type LeaseDeps = Pick<Deps, 'db' | 'clock' | 'replicaId'>;

/**
 * A run's last look before its launch, in the statement that takes its
 * lease: the row still `running` and this replica's (or nobody's), and its
 * workflow still enabled and not paused, its tenant enabled (a Run now: a
 * paused workflow runs it, `launchHeldBack`). Whoever wrote the row checked
 * them under lock (the tick scheduler's claim, the poller's retry verdict,
 * Run now's transaction), but launches come after that commit, up to a
 * batch's worth of launches later (or a stall later): a pause or disable
 * committed since is honoured here, and the run recorded `skipped` saying
 * why, never launched. Read as committed when the statement starts, without
 * locking the workflow or tenant (a poller holds a workflow's row for its
 * whole batch: a launch must not wait on it); a pause committing after this
 * look is after the launch, as for any run already in flight when a workflow
 * is paused.
 */
export async function takeLaunchLease(deps: LeaseDeps, run: Run, now: Date): Promise<'taken' | 'lost' | { heldBack: string }> {
  const evenPaused = run.trigger === 'manual';
  if ((await takeRunLease(deps, run.id, now, { whileItMayFire: true, evenPaused })) > 0) return 'taken';
  // Not taken: the row is no longer this replica's, or the workflow may no longer start it (then the row is still ours to settle).
  const facts = await deps.db
    .selectFrom('runs as r')
    .innerJoin('workflows as w', 'w.id', 'r.workflowId')
    .innerJoin('tenants as t', 't.id', 'w.tenantId')
    .select(['w.enabled', 'w.paused', 't.enabled as tenantEnabled'])
    .where('r.id', '=', run.id)
    .where('r.status', '=', 'running')
    .where((eb) => eb.or([eb('r.leaseOwner', '=', deps.replicaId), eb('r.leaseOwner', 'is', null)]))
    .executeTakeFirst();
  if (!facts) return 'lost';
  const heldBack = launchHeldBack(run.trigger, facts, { enabled: facts.tenantEnabled });
  // Resumed or enabled again between the two statements: an ordinary launch.
  if (!heldBack) return (await takeRunLease(deps, run.id, now)) === 0 ? 'lost' : 'taken';
  return (await recordHeldBack(deps, run, heldBack, now)) ? { heldBack: heldBack.note } : 'lost';
}

/**
 * Records a held-back run `skipped` with its note (neither a failure nor a
 * success: nothing counts it), in one transaction with, for a retry, its
 * tick's verdict: the attempt before it failed, and that is the tick's
 * failure, as when the pause had come before the retry engine's verdict
 * (`failed on attempt 1; not retried (the workflow was paused before its
 * retry's launch)`), with that attempt's error, exit code and log. The
 * verdict is not evaluated at once (no poller claims it): the evaluator
 * counts it from history at the workflow's next evaluation; a paused
 * workflow opens no alert meanwhile, and a disabled one is not watched.
 */
async function recordHeldBack(deps: LeaseDeps, run: Run, heldBack: { note: string; verdict: string }, now: Date): Promise<boolean> {
  return deps.db.transaction().execute(async (trx) => {
    const skipped = await trx
      .updateTable('runs')
      .set({ status: 'skipped', outcomeNote: heldBack.note, finishedAt: now, processedAt: now, startedAt: null, deadlineAt: null, leaseOwner: null, leaseExpiresAt: null })
      .where('id', '=', run.id)
      .where('status', '=', 'running')
      .where((eb) => eb.or([eb('leaseOwner', '=', deps.replicaId), eb('leaseOwner', 'is', null)]))
      .executeTakeFirst();
    if (Number(skipped.numUpdatedRows) === 0) return false;
    if (run.trigger !== 'retry' || run.originalRunId === null) return true;
    const original = await trx.selectFrom('runs').selectAll().where('id', '=', run.originalRunId).forUpdate().executeTakeFirst();
    // Already has a verdict (written by hand, or by an older attempt): nothing to add.
    if (!original || original.status !== 'pending_retry') return true;
    const before = run.attempt - 1;
    const deciding =
      before <= 1 ? original : await trx.selectFrom('runs').selectAll().where('originalRunId', '=', original.id).where('attempt', '=', before).executeTakeFirst();
    if (!deciding) return true;
    await trx
      .updateTable('runs')
      .set(verdictColumns(deciding, true, `failed on attempt ${before}; not retried (${heldBack.verdict})`, now))
      .where('id', '=', original.id)
      .execute();
    return true;
  });
}
