import { sql } from 'kysely';
import pg from 'pg';
import { createDb, type Db } from '../../src/db/connect.js';
import type { BenchDatabase } from './postgres.js';

/**
 * A ledger's past, loaded with `INSERT … SELECT generate_series` (a million
 * runs in well under a minute): every workflow already in the database gets
 * `ticks` settled, processed ticks `stepMinutes` apart, ending at `end`
 * (exclusive), in time order (ids grow with time, as in production). Every
 * `incidentEvery` ticks a workflow fails three ticks in a row and recovers on
 * the fourth: one resolved alert, three events (opened, failure recorded,
 * resolved) and four delivered notifications (opened and resolved, to the
 * tenant's channel and the platform channel). The newest ticks of every
 * workflow are successes, so the history leaves no failure streak behind.
 * `created_at` is the tick's time, as retention reads it.
 */
export interface HistorySeed {
  end: Date;
  ticks: number;
  stepMinutes: number;
  /** One incident per this many ticks per workflow (3 failed ticks each). */
  incidentEvery?: number;
  /** Ticks per INSERT statement (keeps each transaction and sort small). */
  ticksPerStatement?: number;
  /** Runs only: no alerts, events or notifications (a second load on top of a first). */
  runsOnly?: boolean;
}

export interface HistoryLoaded {
  runs: number;
  alerts: number;
  events: number;
  notifications: number;
}

/**
 * A session of its own for the bulk load, without the engine's statement and
 * query timeouts (src/db/connect.ts): one statement of a ten-million-run load
 * (`--full`) runs for minutes, which the engine never does.
 */
async function bulkSession<T>(database: Pick<BenchDatabase, 'url'>, fn: (db: Db) => Promise<T>): Promise<T> {
  const pool = new pg.Pool({ connectionString: database.url, max: 1, options: '-c jit=off' });
  pool.on('error', () => {});
  const db = createDb(pool);
  try {
    return await fn(db);
  } finally {
    await db.destroy();
  }
}

export function seedHistory(database: Pick<BenchDatabase, 'url'>, s: HistorySeed): Promise<HistoryLoaded> {
  return bulkSession(database, (db) => loadHistory(db, s));
}

async function loadHistory(db: Db, s: HistorySeed): Promise<HistoryLoaded> {
  const period = s.incidentEvery ?? 100;
  const stepSec = s.stepMinutes * 60;
  const start = new Date(s.end.getTime() - s.ticks * stepSec * 1000);
  const chunk = s.ticksPerStatement ?? Math.max(1, Math.floor(200_000 / Math.max(1, await workflowCount(db))));
  // phase of tick k for workflow w: failures at phases 0..2, never in the last 4 ticks.
  for (let from = 0; from < s.ticks; from += chunk) {
    const to = Math.min(s.ticks, from + chunk) - 1;
    await sql`
      insert into runs (workflow_id, tick, trigger, status, attempt_status, error, attempt_error, error_group,
                        started_at, finished_at, processed_at, created_at)
      select w.id, t.at, 'schedule', f.status, f.status, f.error, f.error, case when f.error is not null then 'g' || (w.id % 7) end,
        t.at, t.at + interval '20 seconds', t.at + interval '21 seconds', t.at + interval '20 seconds'
      from generate_series(${from}::int, ${to}::int) k
      cross join lateral (select ${start}::timestamptz + make_interval(secs => k * ${stepSec}) as at) t
      cross join workflows w
      cross join lateral (
        select case when k < ${s.ticks - 4} and (k + w.id * 7) % ${period} between 0 and 2 then 'failed' else 'succeeded' end as status
      ) p
      cross join lateral (
        select p.status, case when p.status = 'failed' then 'connection to db-' || (w.id % 5) || ' refused after ' || (k * 13 % 97) || ' ms' end as error
      ) f
      order by k, w.id
    `.execute(db);
  }
  if (s.runsOnly) return counts(db);
  const phase0 = sql`((extract(epoch from f.tick - ${start}::timestamptz) / ${stepSec})::int + f.workflow_id * 7) % ${period} = 0`;
  await sql`
    insert into alerts (workflow_id, generation, status, severity, opened_at, resolved_at, cadence_seconds, policy, consecutive_failures,
                        last_error, error_group, error_group_first_at, error_group_last_at, error_group_count,
                        first_run_id, last_run_id, resolved_by_run_id, healthy_streak, updated_at)
    select f.workflow_id, 1000 + row_number() over (partition by f.workflow_id order by f.tick), 'resolved', 'warning', l.finished_at, r.finished_at,
      ${stepSec}, '{}', 3, l.error, l.error_group, f.finished_at, l.finished_at, 3, f.id, l.id, r.id, 1, r.finished_at
    from runs f
    join runs l on l.workflow_id = f.workflow_id and l.original_run_id is null and l.tick = f.tick + make_interval(secs => 2 * ${stepSec})
    join runs r on r.workflow_id = f.workflow_id and r.original_run_id is null and r.tick = f.tick + make_interval(secs => 3 * ${stepSec})
    where f.status = 'failed' and f.original_run_id is null and f.tick >= ${start}::timestamptz and f.tick < ${s.end}::timestamptz and ${phase0}
    order by l.finished_at, f.workflow_id
  `.execute(db);
  await sql`
    insert into alert_events (alert_id, at, kind, actor, data)
    select a.id, e.at, e.kind, null, e.data::jsonb
    from alerts a
    cross join lateral (values
      (a.opened_at, 'opened', '{"consecutiveFailures": 3}'),
      (a.opened_at + interval '1 second', 'failure_recorded', '{"consecutiveFailures": 3}'),
      (a.resolved_at, 'resolved', '{"healthyStreak": 1}')
    ) as e(at, kind, data)
    where a.generation > 1000 and a.status = 'resolved'
    order by e.at, a.id
  `.execute(db);
  await sql`
    insert into notifications (alert_id, event_id, destination, idempotency_key, status, attempts, next_attempt_at, created_at, sent_at, result)
    select e.alert_id, e.id, d.destination, 'history:' || e.id || ':' || d.destination, 'sent', 1, e.at, e.at, e.at + interval '1 second', '{"ok": true}'
    from alert_events e
    join alerts a on a.id = e.alert_id
    join workflows w on w.id = a.workflow_id
    join tenants t on t.id = w.tenant_id
    cross join lateral (values ('slack:' || coalesce(t.channel, 'CNONE')), ('slack:CPLATFORM')) as d(destination)
    where e.kind in ('opened', 'resolved') and a.generation > 1000
    order by e.id
  `.execute(db);
  return counts(db);
}

async function counts(db: Db): Promise<HistoryLoaded> {
  const { rows } = await sql<HistoryLoaded>`
    select (select count(*) from runs)::int as runs, (select count(*) from alerts)::int as alerts,
      (select count(*) from alert_events)::int as events, (select count(*) from notifications)::int as notifications
  `.execute(db);
  return rows[0]!;
}

async function workflowCount(db: Db): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from workflows`.execute(db);
  return rows[0]!.n;
}

/** VACUUM ANALYZE the ledger's tables: the state autovacuum reaches some time after a bulk load. */
export function vacuumAnalyze(database: Pick<BenchDatabase, 'url'>): Promise<void> {
  return bulkSession(database, async (db) => {
    for (const table of ['runs', 'alerts', 'alert_events', 'notifications', 'workflows']) await sql`vacuum analyze ${sql.table(table)}`.execute(db);
  });
}
