import { sql } from 'kysely';
import type { Deps } from '../deps.js';
import { RUN_LEASE_MS } from './runs.js';
import type { LauncherResolver } from '../launcher.js';

type LeaseDeps = Pick<Deps, 'db' | 'clock' | 'replicaId'>;

/**
 * The running attempts this process is supervising right now (a live child
 * process, an HTTP request in flight). Only these have their leases renewed:
 * renewing by `lease_owner = replicaId` alone would let a restarted process
 * with the same REPLICA_ID keep alive the leases of runs that died with its
 * predecessor, and they would never be failed as "worker lost".
 */
export class HeldRuns {
  private readonly runs = new Map<number, (() => void) | undefined>();
  /** `onLost`: what ends the run's work here should its row turn out to be no longer this replica's (`lose`). */
  add(runId: number, onLost?: () => void): void {
    this.runs.set(runId, onLost);
  }
  release(runId: number): void {
    this.runs.delete(runId);
  }
  list(): number[] {
    return [...this.runs.keys()];
  }
  /** The run's row is no longer this replica's: it is held no more, and its `onLost` runs, once. */
  lose(runId: number): void {
    if (!this.runs.has(runId)) return;
    const onLost = this.runs.get(runId);
    this.runs.delete(runId);
    onLost?.();
  }
}

const heldByResolver = new WeakMap<LauncherResolver, HeldRuns>();

/** Ties a resolver to the runs its launchers hold, so `runLoops` can renew them. */
export function registerHeldRuns(resolver: LauncherResolver, held: HeldRuns): void {
  heldByResolver.set(resolver, held);
}

export function heldRunsOf(resolver: LauncherResolver): HeldRuns | undefined {
  return heldByResolver.get(resolver);
}

/**
 * Takes this replica's lease on a running row it has just launched: a row
 * already leased to it is extended, a row inserted without a lease (nobody
 * was named) is taken, so every supervised run can be failed as "worker
 * lost" if this process dies. A row another replica holds is left alone.
 */
export async function takeRunLease(deps: LeaseDeps, runId: number, now: Date, options: { whileItMayFire?: boolean; evenPaused?: boolean } = {}): Promise<number> {
  const result = await deps.db
    .updateTable('runs')
    .set({ leaseOwner: deps.replicaId, leaseExpiresAt: new Date(now.getTime() + RUN_LEASE_MS) })
    .where('id', '=', runId)
    .where('status', '=', 'running')
    .where((eb) => eb.or([eb('leaseOwner', '=', deps.replicaId), eb('leaseOwner', 'is', null)]))
    // A run's last look (ledger/launch-run.ts): its workflow still enabled and not paused (a Run now: `evenPaused`), its tenant enabled.
    .$if(!!options.whileItMayFire, (q) =>
      q.where((eb) =>
        eb.exists(
          eb
            .selectFrom('workflows as w')
            .innerJoin('tenants as t', 't.id', 'w.tenantId')
            .select(sql`1`.as('one'))
            .whereRef('w.id', '=', 'runs.workflowId')
            .where('w.enabled', '=', true)
            .$if(!options.evenPaused, (w) => w.where('w.paused', '=', false))
            .where('t.enabled', '=', true),
        ),
      ),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Extends this replica's leases on running rows it supervises, and only
 * those it still holds: a lease handed back (an accepted callback launch)
 * stays handed back even when a renewal that read the held runs before the
 * hand-back reaches the database after it; taken again, it would run out
 * unrenewed and fail a run still waiting for its callback as "worker lost".
 */
export async function renewRunLeases(deps: LeaseDeps, runIds: number[], now: Date): Promise<number> {
  return (await renewedRunIds(deps, runIds, now)).length;
}

async function renewedRunIds(deps: LeaseDeps, runIds: number[], now: Date): Promise<number[]> {
  if (runIds.length === 0) return [];
  const rows = await deps.db
    .updateTable('runs')
    .set({ leaseExpiresAt: new Date(now.getTime() + RUN_LEASE_MS) })
    .where('id', 'in', runIds)
    .where('status', '=', 'running')
    .where('leaseOwner', '=', deps.replicaId)
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/**
 * The renewal a replica's loop makes: every held run's lease, in one
 * statement. A held run the statement did not renew is no longer this
 * replica's: it ended (a report, the supervisor's own outcome a moment ago)
 * or, after this replica stalled longer than the lease (a GC pause, a frozen
 * VM), it was failed as "worker lost" and its next attempt may be running on
 * another replica. Either way it is held no more, and its `onLost` ends what
 * still runs of it here (HeldRuns.lose), so a stalled replica waking up does
 * not carry on a run beside the attempt that replaced it.
 */
export async function renewHeldRuns(deps: LeaseDeps, held: HeldRuns, now: Date): Promise<number> {
  const ids = held.list();
  const renewed = new Set(await renewedRunIds(deps, ids, now));
  for (const id of ids) if (!renewed.has(id)) held.lose(id);
  return renewed.size;
}

/**
 * Hands a run's end to someone else (the far side of a callback launch): no
 * lease, so only its deadline can fail it, not the loss of this replica.
 */
export async function releaseRunLease(deps: LeaseDeps, runId: number): Promise<void> {
  await deps.db
    .updateTable('runs')
    .set({ leaseOwner: null, leaseExpiresAt: null })
    .where('id', '=', runId)
    .where('status', '=', 'running')
    .where('leaseOwner', '=', deps.replicaId)
    .execute();
}

/** Renews well inside the lease, so one slow or failed renewal does not lose it. */
export const LEASE_RENEW_INTERVAL_MS = RUN_LEASE_MS / 4;
