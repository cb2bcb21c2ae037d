import { sql, type Transaction } from 'kysely';
import type { Database, Run } from '../db/schema.js';
import { insertScheduledRows, newRunRow, RUN_LEASE_MS } from '../ledger/runs.js';
import type { Launch } from './launch-queue.js';
import type { ClaimedWorkflow, Fire, Firing } from './tick-plan.js';
import type { RunStillRunning } from '../domain/overlap.js';
import { coalescedNote, missedTickError } from '../domain/catch-up.js';

/** Due managed workflows, locked FOR UPDATE SKIP LOCKED: another scheduler skips them and takes the next ones. */
export function claimDueWorkflows(trx: Transaction<Database>, now: Date, limit: number): Promise<ClaimedWorkflow[]> {
  return trx
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
    .limit(limit)
    .forUpdate('workflows')
    .skipLocked()
    .execute();
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
