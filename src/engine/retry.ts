import type { Transaction } from 'kysely';
import type { Database, Run, Tenant, Workflow } from '../db/schema.js';
import type { Deps } from '../deps.js';
import type { CadenceProfile } from '../domain/cadence.js';
import { insertRunningRun, verdictColumns } from '../ledger/runs.js';
import { hasAnotherAttempt } from '../domain/retry-budget.js';
import { isPermanentLaunchError, permanentLaunchReason } from '../domain/launch-answer.js';

/**
 * The retry engine (DESIGN.md, core idea 3). Budget is per tick: a tick gets
 * 1 + retries attempts in all. Attempts after the first are rows of their own
 * (trigger 'retry', same tick, original_run_id → the tick's original row),
 * which carries the tick's verdict once the last attempt ends.
 */

export interface Launch {
  run: Run;
  workflow: Workflow;
  tenant: Tenant;
  timeoutSeconds: number;
}

export type RetryOutcome =
  /** A new attempt was inserted; launch it after commit. The tick has no verdict yet. */
  | { kind: 'retrying'; launch: Launch }
  /** The tick's verdict is final and written on its original row. */
  | { kind: 'verdict'; original: Run };

/** A finished run as the poller hands it over, with what decides its retries. */
export interface FinishedRunContext {
  run: Run;
  workflow: Workflow;
  tenant: Tenant;
  profile: CadenceProfile;
}

type RetryDeps = Pick<Deps, 'launchers' | 'replicaId'>;


/**
 * A tick's original row failed. With budget (and a launcher) it becomes
 * `pending_retry` and attempt 2 is inserted; otherwise its failure is the verdict.
 */
export async function handleFailedOriginal(trx: Transaction<Database>, deps: RetryDeps, ctx: FinishedRunContext, now: Date): Promise<RetryOutcome> {
  const { run } = ctx;
  if (!retriesFailure(deps, ctx)) return { kind: 'verdict', original: run };
  const original = await trx.updateTable('runs').set({ status: 'pending_retry' }).where('id', '=', run.id).returningAll().executeTakeFirstOrThrow();
  return insertNextAttempt(trx, deps, ctx, original, 2, now);
}

/**
 * Whether a failed tick of this workflow gets another attempt (`handleFailedOriginal` then writes its row); otherwise it is the verdict, with no statement.
 * A launch refused for good (a permanent answer, or refused before sending: src/domain/launch-answer.ts) gets none: the same request would be refused again.
 */
export function retriesFailure(deps: Pick<Deps, 'launchers'>, ctx: Pick<FinishedRunContext, 'run' | 'workflow' | 'profile'>): boolean {
  return !isPermanentLaunchError(ctx.run.error) && hasAnotherAttempt(1, ctx.profile.retries, canRelaunch(deps, ctx.workflow));
}

/**
 * Whether the retry engine may start another attempt of this workflow: it
 * has a launcher and is not paused. A paused workflow fires nothing, retries
 * included: a failure an outside scheduler reports while it is paused is its
 * tick's verdict at once, and an attempt in flight when it was paused ends
 * the tick with its own outcome. A pause or disable committed after this
 * verdict but before the attempt's launch is honoured at the launch
 * (ledger/held-back-launch.ts): the attempt is recorded skipped and the tick
 * failed with the attempt before it.
 */
function canRelaunch(deps: Pick<Deps, 'launchers'>, workflow: Workflow): boolean {
  return !workflow.paused && !!deps.launchers(workflow);
}

/**
 * A retry attempt ended. Success: the tick recovered. Failure with budget: one
 * more attempt. Failure without: the tick failed with this attempt's error.
 */
export async function handleFinishedAttempt(trx: Transaction<Database>, deps: RetryDeps, ctx: FinishedRunContext, now: Date): Promise<RetryOutcome> {
  const { run, workflow, profile } = ctx;
  const original = await trx.selectFrom('runs').selectAll().where('id', '=', run.originalRunId!).forUpdate().executeTakeFirstOrThrow();
  if (original.status !== 'pending_retry') {
    // Already has a verdict (written by hand, or an attempt from an older budget): nothing to add.
    return { kind: 'verdict', original };
  }
  const failed = run.status !== 'succeeded';
  const permanent = failed ? permanentLaunchReason(run.error) : undefined;
  if (failed && !permanent && hasAnotherAttempt(run.attempt, profile.retries, canRelaunch(deps, workflow))) return insertNextAttempt(trx, deps, ctx, original, run.attempt + 1, now);
  const note = permanent ? `failed on attempt ${run.attempt}; not retried (${permanent})` : failed ? `failed on all ${run.attempt} attempts` : `recovered on attempt ${run.attempt}`;
  // The error group is the poller's, taken when it claimed the attempt (domain/fingerprint.ts errorGroupOf).
  const verdict = await trx
    .updateTable('runs')
    .set(verdictColumns(run, failed, note, now))
    .where('id', '=', original.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return { kind: 'verdict', original: verdict };
}

/** Inserts the tick's next attempt (trigger 'retry', pointing at the original row) for launch after commit. */
async function insertNextAttempt(trx: Transaction<Database>, deps: Pick<Deps, 'replicaId'>, ctx: FinishedRunContext, original: Run, attempt: number, now: Date): Promise<RetryOutcome> {
  const { workflow, tenant, profile } = ctx;
  const run = await insertRunningRun(
    trx,
    { workflow, tick: original.tick, trigger: 'retry', attempt, originalRunId: original.id, timeoutSeconds: profile.timeoutSeconds, leaseOwner: deps.replicaId },
    now,
  );
  if (!run) throw new Error(`retry attempt ${attempt} of run ${original.id} was not inserted`);
  return { kind: 'retrying', launch: { run, workflow, tenant, timeoutSeconds: profile.timeoutSeconds } };
}
