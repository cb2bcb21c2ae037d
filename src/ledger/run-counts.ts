import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { RunStatus } from '../db/schema.js';

export const RUN_STATUSES: RunStatus[] = ['running', 'pending_retry', 'succeeded', 'failed', 'missed', 'skipped'];

/** Below this many runs the ledger is counted exactly (a few milliseconds); above it the settled statuses are estimated. */
export const EXACT_RUN_COUNT_BELOW = 10_000;

export interface RunCounts {
  byStatus: Map<RunStatus, number>;
  /** True when the settled statuses are PostgreSQL's estimate rather than a count. */
  estimated: boolean;
}

/**
 * Runs by status for /metrics, at a cost that does not grow with history
 * (issue 15: a count of a ledger of 24 million runs a day is a sequential
 * scan of all of them, on every scrape of every replica):
 * - runs in flight (`running`, `pending_retry`) are counted exactly through
 *   partial indexes holding only them (`runs_running`, `runs_pending_retry`):
 *   their number is the work in progress, not the history;
 * - the settled statuses are the table's live row count (the statistics
 *   collector's, kept up to date at every commit) split by the status
 *   frequencies ANALYZE (autovacuum) last sampled: an estimate, a few percent
 *   off at most between two analyses, read from the catalogue in constant time;
 * - a small ledger (fewer than `exactBelow` runs by those same statistics, or
 *   never analysed and counted few) is counted exactly, which is cheap there.
 */
export async function countRunsByStatus(db: Db, exactBelow = EXACT_RUN_COUNT_BELOW): Promise<RunCounts> {
  const size = await sql<{ rows: number }>`
    select greatest(c.reltuples, coalesce(s.n_live_tup, 0), 0)::float8 as rows
    from pg_class c left join pg_stat_user_tables s on s.relid = c.oid
    where c.oid = 'runs'::regclass
  `.execute(db);
  if ((size.rows[0]?.rows ?? 0) < exactBelow) {
    const rows = await db.selectFrom('runs').select(['status', (eb) => eb.fn.countAll<number>().as('n')]).groupBy('status').execute();
    return { byStatus: new Map(rows.map((r) => [r.status, Number(r.n)])), estimated: false };
  }
  const settled = await sql<{ status: RunStatus; n: number }>`
    select v.status, round(t.live * v.freq)::float8 as n
    from (
      select coalesce(nullif(s.n_live_tup, 0), greatest(c.reltuples, 0))::float8 as live
      from pg_class c left join pg_stat_user_tables s on s.relid = c.oid
      where c.oid = 'runs'::regclass
    ) t
    cross join pg_stats st
    cross join lateral unnest(st.most_common_vals::text::text[], st.most_common_freqs) as v(status, freq)
    where st.schemaname = current_schema() and st.tablename = 'runs' and st.attname = 'status'
  `.execute(db);
  const inFlight = await sql<{ running: number; pendingRetry: number }>`
    select (select count(*) from runs where status = 'running')::int as running,
      (select count(*) from runs where status = 'pending_retry')::int as pending_retry
  `.execute(db);
  const byStatus = new Map(settled.rows.map((r) => [r.status, Number(r.n)]));
  byStatus.set('running', inFlight.rows[0]!.running);
  byStatus.set('pending_retry', inFlight.rows[0]!.pendingRetry);
  return { byStatus, estimated: true };
}
