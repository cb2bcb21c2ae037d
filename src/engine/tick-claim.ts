import { sql, type Transaction } from 'kysely';
import type { Database, Run } from '../db/schema.js';
import { insertScheduledRows, newRunRow, RUN_LEASE_MS } from '../ledger/runs.js';
import type { Launch } from './launch-queue.js';
import type { ClaimedWorkflow, Fire, Firing } from './tick-plan.js';
import type { RunStillRunning } from '../domain/overlap.js';
import { prepared } from '../db/prepared.js';
import { coalescedNote, missedTickError } from '../domain/catch-up.js';

/**
 * How many of the oldest due ticks a claim ranks by tenant: ten batches'
 * worth, at least 10,000 (two tenants' worth of due workflows at the default
 * MAX_WORKFLOWS_PER_TENANT). Within it a tenant's tick waits for no other
 * tenant's backlog; beyond it (more ticks due before it than the window) it
 * waits until that backlog is within the window. The bound keeps each claim's
 * cost an index range, whatever the number of due workflows.
 */
export function dueWindow(limit: number): number {
  return Math.max(10_000, limit * 10);
}

/**
 * Due managed workflows, locked FOR UPDATE SKIP LOCKED: another scheduler
 * skips them and takes the next ones. Tenants in turn (each tenant's oldest
 * due tick, then each one's second, …) among the oldest `dueWindow` due
 * ticks, so one tenant's thousands of workflows due at one minute never hold
 * back another tenant's tick beyond the batch it lands in; within a tenant,
 * oldest first. Returned in that order (the order their runs are inserted
 * and launched).
 *
 * The tenant's row is locked too, FOR SHARE SKIP LOCKED: a tenant being
 * disabled (its row updated, not yet committed) is skipped, not fired from a
 * snapshot that still shows it enabled, and one whose disable committed
 * after this statement began fails the recheck of the locked row. A disable
 * waits for a batch holding its tenant to commit. Skipping rather than
 * waiting means the claim never waits on a lock, so it cannot deadlock with a
 * sync that updates tenants and then their workflows.
 */
export async function claimDueWorkflows(trx: Transaction<Database>, now: Date, limit: number): Promise<ClaimedWorkflow[]> {
  const { rows } = await sql<ClaimedWorkflow>`${prepared}
    with queue as materialized (
      -- The oldest due ticks only (an index range on workflows_due), ranked and sorted before any row is locked;
      -- read back in this order (a CTE scan keeps it), the locks below are tried row by row until the limit.
      select d.id, d.tenant_id from (
        select w.id, w.tenant_id, w.next_tick_at from workflows w join tenants t on t.id = w.tenant_id and t.enabled
        where w.enabled and not w.paused and w.mode = 'managed' and w.next_tick_at <= ${now}
        order by w.next_tick_at limit ${dueWindow(limit)}
      ) d
      order by row_number() over (partition by d.tenant_id order by d.next_tick_at, d.id), d.next_tick_at, d.id
    )
    select w.*, t.name as tenant_name
    from queue q
    -- A subquery that locks is never merged into the join: each is run for one queue row at a time, by primary key,
    -- and gives the row as locked (rechecked against the latest committed version).
    cross join lateral (
      select w.* from workflows w
      where w.id = q.id and w.enabled and not w.paused and w.mode = 'managed' and w.next_tick_at <= ${now}
      for update skip locked
    ) w
    cross join lateral (select t.name from tenants t where t.id = q.tenant_id and t.enabled for share skip locked) t
    limit ${limit}
  `.execute(trx);
  return rows;
}

/**
 * The fired ticks' original rows, `running` and leased to this replica. A
 * tick that already has its original row (the unique index) is skipped by
 * `insertScheduledRows` and absent from the result: nothing to launch for it.
 */
export async function insertOriginalRuns(trx: Transaction<Database>, fires: Firing[], replicaId: string, now: Date, notes: (string | null)[] = []): Promise<Launch[]> {
  const leaseExpiresAt = new Date(now.getTime() + RUN_LEASE_MS);
  const deadlines = fires.map((f) => new Date(now.getTime() + f.timeoutSeconds * 1000));
  const rows = await insertScheduledRows(
    trx,
    fires.map((f, i) => ({ workflowId: f.workflow.id, tick: f.tick, status: 'running', startedAt: now, deadlineAt: deadlines[i]!, leaseOwner: replicaId, leaseExpiresAt, outcomeNote: notes[i] ?? null })),
  );
  const index = new Map(fires.map((f, i) => [f.workflow.id, i]));
  // In id order: launches start in the order the ledger shows.
  return rows
    .sort((a, b) => a.id - b.id)
    .map((r) => {
      const i = index.get(r.workflowId)!;
      const fire = fires[i]!;
      const run: Run = {
        id: r.id,
        ...newRunRow({
          workflowId: r.workflowId,
          tick: fire.tick,
          trigger: 'schedule',
          status: 'running',
          startedAt: now,
          deadlineAt: deadlines[i]!,
          leaseOwner: replicaId,
          leaseExpiresAt,
          outcomeNote: notes[i] ?? null,
        }),
        createdAt: r.createdAt,
      };
      return { run, fire };
    });
}

/**
 * The due ticks not fired. Skipped rows are neither successes nor failures:
 * born processed, so the poller never sees them: the older ticks a late run
 * stands for (catch-up), and (`yielded`) the ticks not fired because a run
 * was still running (overlap: skip), each with the note that says why.
 * Missed rows (past the catch-up window) are confirmed failures the poller
 * evaluates: true when any was written, for the caller to wake the pollers.
 */
export async function insertUnfiredRuns(trx: Transaction<Database>, fires: Fire[], now: Date, yielded: { fire: Firing; note: string }[] = []): Promise<boolean> {
  const skipped = (workflowId: number, tick: Date, outcomeNote: string) => ({ workflowId, tick, status: 'skipped' as const, finishedAt: now, outcomeNote, processedAt: now });
  const missed = fires.flatMap((f) => f.missed.map((tick) => ({ workflowId: f.workflow.id, tick, status: 'missed' as const, finishedAt: now, error: missedTickError(tick, f.catchUpSeconds) })));
  await insertScheduledRows(trx, [
    ...fires.flatMap((f) => f.skipped.map((tick) => skipped(f.workflow.id, tick, coalescedNote(f.tick!)))),
    ...yielded.map((y) => skipped(y.fire.workflow.id, y.fire.tick, y.note)),
    ...missed,
  ]);
  return missed.length > 0;
}

/**
 * The newest run still running of each workflow (a tick's, a retry's or a
 * manual one): what a tick falling due now would overlap. Read through the
 * partial index of running runs, so its cost follows the runs in flight, not
 * the history.
 */
export async function runsStillRunning(trx: Transaction<Database>, workflowIds: number[]): Promise<Map<number, RunStillRunning>> {
  if (workflowIds.length === 0) return new Map();
  const rows = await trx
    .selectFrom('runs')
    .select(['workflowId', 'id', 'tick', 'attempt'])
    .where('status', '=', 'running')
    .where(sql<boolean>`workflow_id = any(${workflowIds}::int4[])`)
    .execute();
  const newest = new Map<number, RunStillRunning>();
  for (const r of rows) if ((newest.get(r.workflowId)?.id ?? 0) < r.id) newest.set(r.workflowId, { id: r.id, tick: r.tick, attempt: r.attempt });
  return newest;
}

export async function advanceNextTicks(trx: Transaction<Database>, fires: Fire[]): Promise<void> {
  await setNextTicks(trx, fires.map((f) => ({ id: f.workflow.id, nextTickAt: f.nextTickAt })));
}

/** Each workflow's next tick, in one statement whatever their number. */
export async function setNextTicks(trx: Transaction<Database>, rows: { id: number; nextTickAt: Date }[]): Promise<void> {
  if (rows.length === 0) return;
  const ids = rows.map((r) => r.id);
  // `w.id = any(…)` lets the planner find the rows by primary key; joined to unnest alone it
  // hashes the whole table (a sequential scan of 100,000 workflows per batch).
  await sql`
    update workflows w set next_tick_at = v.next_tick_at
    from unnest(${ids}::int4[], ${rows.map((r) => r.nextTickAt.toISOString())}::timestamptz[]) as v(id, next_tick_at)
    where w.id = v.id and w.id = any(${ids}::int4[])
  `.execute(trx);
}
