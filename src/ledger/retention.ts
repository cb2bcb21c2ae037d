import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { DURATION_SAMPLES_KEPT, removedWorkflowCutoff, STREAK_FAILURES_KEPT } from '../domain/retention.js';
import { deleteRemovedWorkflows } from './workflow-purge.js';

export interface RetentionPolicy {
  /** Finished, processed runs older than this go (with their retry attempts), and housekeeping firings fired longer ago. */
  runDays: number;
  /** Resolved alerts resolved longer ago than this go, with their events, threads and notifications; and workflows removed longer ago with nothing left. */
  alertDays: number;
  /** Settled notifications (sent, dead, skipped) of resolved alerts older than this go. */
  notificationDays: number;
  /** Rows per statement: each batch is its own short transaction, so no lock is held for long. */
  batch: number;
}

export const DEFAULT_RETENTION: RetentionPolicy = { runDays: 30, alertDays: 180, notificationDays: 30, batch: 5000 };

export interface RetentionResult {
  alerts: number;
  notifications: number;
  runs: number;
  /** housekeeping_firings rows: the record (and once-across-replicas claim) of each retention pass and digest. */
  firings: number;
  /** Workflows removed (disabled) longer than `alertDays` ago with no alert, run or enabled downstream left. */
  workflows: number;
  batches: number;
}

const DAY_MS = 86_400_000;

/** One batch as it ran: a statement of its own, so `ms` is also the longest any lock it took was held. */
export interface RetentionBatch {
  table: 'alerts' | 'notifications' | 'runs' | 'housekeeping_firings' | 'workflows';
  rows: number;
  ms: number;
}

/**
 * One retention pass: bounded batched deletes, oldest first, each batch a
 * statement of its own (autocommit), until a batch comes back short. Why not
 * partitions: see docs/retention.md. What is never removed:
 * - an open alert, its events, threads and notifications;
 * - any run an alert (open or kept resolved) points at, the attempts of that
 *   tick, and every run of a workflow since its open alert's first run (the
 *   open alert's history);
 * - a tick failure no settled success has followed yet: the streak the
 *   evaluator counts, before it has opened an alert (a weekly job with
 *   `alertAfter: 5` counts back five weeks); past the retention only while
 *   among the streak's newest STREAK_FAILURES_KEPT (src/domain/retention.ts),
 *   so a streak that never ends stays bounded;
 * - a workflow's newest success while an alert still pins a failure before
 *   it (else that failure would be counted again as the current streak);
 * - the newest DURATION_SAMPLES_KEPT successful attempts of each workflow, with
 *   their tick: what its normal duration is learned from ("running long");
 * - runs not finished (`running`, `pending_retry`) or not yet processed;
 * - housekeeping firings of the last `runDays` (a claim is only ever contended
 *   at its own instant, or a digest's few minutes of catch-up, so an old one
 *   is only a record);
 * - a workflow that is enabled (paused included), removed within `alertDays`,
 *   or still has an alert or a run, or an enabled downstream naming it.
 * Order matters: alerts first, so the runs they pointed at are free by the
 * time the run batches look.
 */
export async function runRetentionPass(db: Db, now: Date, policy: RetentionPolicy = DEFAULT_RETENTION, onBatch?: (batch: RetentionBatch) => void): Promise<RetentionResult> {
  const out: RetentionResult = { alerts: 0, notifications: 0, runs: 0, firings: 0, workflows: 0, batches: 0 };
  const cut = (days: number) => new Date(now.getTime() - days * DAY_MS);
  const drain = async (table: RetentionBatch['table'], step: () => Promise<number>) => {
    let total = 0;
    for (;;) {
      const started = performance.now();
      const n = await step();
      onBatch?.({ table, rows: n, ms: performance.now() - started });
      out.batches++;
      total += n;
      if (n < policy.batch) return total;
    }
  };
  out.alerts = await drain('alerts', () => deleteResolvedAlerts(db, cut(policy.alertDays), policy.batch));
  // Runs and notifications are walked in id order with a cursor: rows that must stay (an alert still points
  // at them) are passed over once per pass, not once per batch (each batch re-reading them made the batches of a
  // long pass slower and slower: bench/ledger-growth.ts).
  const walk = (table: RetentionBatch['table'], step: (after: number) => Promise<Batch>) => {
    let after = 0;
    return drain(table, async () => {
      const done = await step(after);
      after = done.last;
      return done.n;
    });
  };
  out.notifications = await walk('notifications', (after) => deleteSettledNotifications(db, cut(policy.notificationDays), policy.batch, after));
  out.runs = await walk('runs', (after) => deleteRuns(db, cut(policy.runDays), policy.batch, after));
  out.firings = await drain('housekeeping_firings', () => deleteOldFirings(db, cut(policy.runDays), policy.batch));
  // Last: a removed workflow goes once its alerts and runs have (src/ledger/workflow-purge.ts).
  out.workflows = await walk('workflows', (after) => deleteRemovedWorkflows(db, removedWorkflowCutoff(now, policy.alertDays), policy.batch, after));
  return out;
}

/** Resolved alerts (SKIP LOCKED: one being reopened or refreshed right now waits for the next pass), with everything hanging off them. */
async function deleteResolvedAlerts(db: Db, before: Date, batch: number): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    with victims as (
      select id from alerts
      where status = 'resolved' and resolved_at < ${before}
      order by resolved_at
      limit ${batch}
      for update skip locked
    ),
    gone_notifications as (delete from notifications n using victims v where n.alert_id = v.id returning 1),
    gone_threads as (delete from alert_threads t using victims v where t.alert_id = v.id returning 1),
    gone_events as (delete from alert_events e using victims v where e.alert_id = v.id returning 1),
    gone as (delete from alerts a using victims v where a.id = v.id returning 1)
    select (select count(*) from gone)::int as n
  `.execute(db);
  return rows[0]?.n ?? 0;
}

/** Removed count, and the highest id of the batch: the next batch starts after it. */
interface Batch {
  n: number;
  last: number;
}

async function deleteSettledNotifications(db: Db, before: Date, batch: number, after: number): Promise<Batch> {
  const { rows } = await sql<Batch>`
    with victims as (
      select n.id from notifications n join alerts a on a.id = n.alert_id
      where n.id > ${after} and n.status in ('sent', 'dead', 'skipped') and n.created_at < ${before} and a.status = 'resolved'
      order by n.id
      limit ${batch}
      for update of n skip locked
    ),
    gone as (delete from notifications n using victims v where n.id = v.id returning 1)
    select (select count(*) from gone)::int as n, coalesce((select max(id) from victims), ${after})::float8 as last
  `.execute(db);
  return rows[0] ?? { n: 0, last: after };
}

/**
 * True when run `r` may go as far as this rule says: a workflow's newest
 * settled success stays while an alert (kept: open, or resolved within the
 * retention) still pins a failure before it. The evaluator counts failures
 * back to the newest success; without it that pinned failure (an alert
 * resolved by hand, then a success, then a month paused) would be counted
 * as the current streak. A CASE, so the alerts are only asked about for the
 * newest success (alerts_by_workflow).
 */
const NOT_NEEDED_AS_NEWEST_SUCCESS = sql`case
          when r.status <> 'succeeded' then true
          when exists (
            select 1 from runs s
            where s.workflow_id = r.workflow_id and s.original_run_id is null and s.tick > coalesce(r.tick, r.started_at, r.finished_at)
              and s.status = 'succeeded' and s.processed_at is not null
          ) then true
          when exists (
            select 1 from runs s
            where s.workflow_id = r.workflow_id and s.original_run_id is null and s.tick is null and s.id <> r.id
              and s.status = 'succeeded' and s.processed_at is not null
              and coalesce(s.started_at, s.finished_at) > coalesce(r.tick, r.started_at, r.finished_at)
          ) then true
          else not exists (
            select 1 from alerts a join runs f on f.id in (a.first_run_id, a.last_run_id)
            where a.workflow_id = r.workflow_id and f.status in ('failed', 'missed')
              and coalesce(f.tick, f.started_at, f.finished_at) < coalesce(r.tick, r.started_at, r.finished_at)
          )
        end`;

/** A tick's original row and its attempts go together, or not at all. */
async function deleteRuns(db: Db, before: Date, batch: number, after: number): Promise<Batch> {
  const { rows } = await sql<Batch>`
    with victims as (
      select r.id from runs r
      where r.id > ${after} and r.created_at < ${before}
        and r.original_run_id is null
        and r.status in ('succeeded', 'failed', 'missed', 'skipped')
        and (r.processed_at is not null or r.status = 'skipped')
        and not exists (
          select 1 from alerts o
          where o.workflow_id = r.workflow_id and o.status = 'open' and (o.first_run_id is null or o.first_run_id <= r.id)
        )
        -- a tick failure of the current streak (no settled success after it) is counted by the evaluator: an alert
        -- not open yet (alertAfter × cadence longer than the retention) opens on the history it reads (core idea 4).
        -- Past the retention one stays only among the streak's newest STREAK_FAILURES_KEPT (counted as the evaluator counts):
        -- far above any alertAfter, and a streak that never ends (every minute, for months) stays bounded
        and (r.tick is null or r.status not in ('failed', 'missed')
          or exists (
            select 1 from runs s
            where s.workflow_id = r.workflow_id and s.original_run_id is null and s.tick > r.tick
              and s.status in ('failed', 'missed') and s.processed_at is not null and not s.in_maintenance
            offset ${STREAK_FAILURES_KEPT - 1}
          )
          or exists (
            select 1 from runs s
            where s.workflow_id = r.workflow_id and s.original_run_id is null and s.tick > r.tick
              and s.status = 'succeeded' and s.processed_at is not null
          )
          or exists (
            select 1 from runs s
            where s.workflow_id = r.workflow_id and s.original_run_id is null and s.tick is null
              and s.status = 'succeeded' and s.processed_at is not null and coalesce(s.started_at, s.finished_at) > r.tick
          ))
        and ${NOT_NEEDED_AS_NEWEST_SUCCESS}
        and not exists (
          select 1 from runs x
          where (x.id = r.id or x.original_run_id = r.id)
            and (x.status in ('running', 'pending_retry')
              or exists (select 1 from alerts a where a.first_run_id = x.id)
              or exists (select 1 from alerts a where a.last_run_id = x.id)
              or exists (select 1 from alerts a where a.resolved_by_run_id = x.id)
              -- one of the newest successful attempts the normal duration is learned from (run-durations.ts):
              -- fewer than DURATION_SAMPLES_KEPT newer ones (runs_successful_durations, a bounded index range)
              or (x.attempt_status = 'succeeded' and x.duration_seconds is not null and not exists (
                select 1 from runs d
                where d.workflow_id = x.workflow_id and d.attempt_status = 'succeeded' and d.duration_seconds is not null
                  and d.finished_at > x.finished_at
                offset ${DURATION_SAMPLES_KEPT - 1}
              )))
        )
      order by r.id
      limit ${batch}
      for update of r skip locked
    ),
    gone_attempts as (delete from runs x using victims v where x.original_run_id = v.id returning 1),
    gone as (delete from runs r using victims v where r.id = v.id returning 1)
    select (select count(*) from gone)::int + (select count(*) from gone_attempts)::int as n, coalesce((select max(id) from victims), ${after})::float8 as last
  `.execute(db);
  return rows[0] ?? { n: 0, last: after };
}

/**
 * Firings fired before `before`, oldest first. The table holds a few dozen
 * rows a day (each retention pass, each tenant's digest; the digest job's own
 * per-minute claims it prunes itself after a day), so finding a batch reads
 * little even without an index on `fire_at`.
 */
async function deleteOldFirings(db: Db, before: Date, batch: number): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    with victims as (
      select job, fire_at from housekeeping_firings
      where fire_at < ${before}
      order by fire_at
      limit ${batch}
      for update skip locked
    ),
    gone as (delete from housekeeping_firings f using victims v where f.job = v.job and f.fire_at = v.fire_at returning 1)
    select (select count(*) from gone)::int as n
  `.execute(db);
  return rows[0]?.n ?? 0;
}
