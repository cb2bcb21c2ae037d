import { sql } from 'kysely';
import type { Clock } from '../../src/clock.js';
import { loadConfig } from '../../src/config/env.js';
import type { Db } from '../../src/db/connect.js';
import type { Deps } from '../../src/deps.js';
import { runEscalationClock } from '../../src/engine/escalation.js';
import { pollFinishedRuns } from '../../src/engine/poller.js';
import { createMetrics } from '../../src/http/metrics-route.js';
import { fireDueTicks } from '../../src/engine/tick-scheduler.js';
import type { Launcher } from '../../src/launcher.js';
import { silentLogger } from '../../src/log.js';
import { latenessRecorder } from './lateness.js';
import { median, percentile } from './stats.js';

/**
 * The four things bench/ledger-growth.ts times on a ledger, each on the same
 * workload whatever history lies behind it, each from the same starting state
 * (`reset` removes whatever the previous measurement added above the
 * history's watermark). Everything runs in the bench process, on the engine's
 * real functions, one replica.
 */
export interface Watermark {
  runs: number;
  alerts: number;
  events: number;
  notifications: number;
}

export async function watermark(db: Db): Promise<Watermark> {
  const { rows } = await sql<Watermark>`
    select coalesce((select max(id) from runs), 0)::float8 as runs, coalesce((select max(id) from alerts), 0)::float8 as alerts,
      coalesce((select max(id) from alert_events), 0)::float8 as events, coalesce((select max(id) from notifications), 0)::float8 as notifications
  `.execute(db);
  return rows[0]!;
}

/** Back to the state just after the history was loaded: no workload rows, managed workflows not due. */
export async function reset(db: Db, w: Watermark): Promise<void> {
  await sql`delete from notifications where id > ${w.notifications}`.execute(db);
  await sql`delete from alert_threads where alert_id > ${w.alerts}`.execute(db);
  await sql`delete from alert_events where id > ${w.events}`.execute(db);
  await sql`delete from alerts where id > ${w.alerts}`.execute(db);
  await sql`delete from runs where id > ${w.runs} and original_run_id is not null`.execute(db);
  await sql`delete from runs where id > ${w.runs}`.execute(db);
  await sql`update workflows set next_tick_at = null where mode = 'managed' and next_tick_at is not null`.execute(db);
}

export function benchDeps(db: Db, clock: Clock, launcher?: Launcher): Deps {
  const config = loadConfig({ LOG_LEVEL: 'silent', PLATFORM_CHANNEL: 'CPLATFORM' });
  return { db, clock, config, logger: silentLogger, replicaId: 'bench-ledger', launchers: () => launcher };
}

const fixedClock = (at: Date): Clock => ({ now: () => at, sleep: (ms) => new Promise((r) => setTimeout(r, ms)) });

/**
 * Evaluation throughput: `ticks` finished, unprocessed ticks of every
 * workflow just after the history; a quarter of the workflows fail three
 * ticks and recover on the fourth (an alert opened, failures recorded,
 * resolved). Runs/s until the poller finds nothing more.
 */
export async function timeEvaluation(db: Db, from: Date, ticks: number): Promise<{ runsPerSecond: number; runs: number; alerts: number }> {
  const { rows } = await sql<{ n: number }>`
    with inserted as (
      insert into runs (workflow_id, tick, trigger, status, attempt_status, error, attempt_error, started_at, finished_at, created_at)
      select w.id, t.at, 'external', s.status, s.status, s.error, s.error, t.at, t.at + interval '20 seconds', t.at + interval '20 seconds'
      from generate_series(0, ${ticks - 1}) k
      cross join lateral (select ${from}::timestamptz + make_interval(mins => 5 * k) as at) t
      cross join workflows w
      cross join lateral (
        select case when w.id % 4 = 0 and k < ${ticks - 1} then 'failed' else 'succeeded' end as status,
          case when w.id % 4 = 0 and k < ${ticks - 1} then 'connection to db-' || (w.id % 5) || ' refused' end as error
      ) s
      order by k, w.id
      returning 1
    ) select count(*)::int as n from inserted
  `.execute(db);
  const deps = benchDeps(db, fixedClock(new Date(from.getTime() + ticks * 300_000)));
  const t0 = performance.now();
  while (await pollFinishedRuns(deps));
  const seconds = (performance.now() - t0) / 1000;
  const alerts = await sql<{ n: number }>`select count(*)::int as n from alerts where opened_at >= ${from}`.execute(db);
  return { runsPerSecond: rows[0]!.n / seconds, runs: rows[0]!.n, alerts: alerts.rows[0]!.n };
}

/**
 * Tick lateness: every managed workflow due at `boundary`; the clock is real
 * time shifted so that it reads `boundary` when firing starts; lateness of a
 * tick = when its launcher was called − the tick. Returns p50, p99, count.
 */
export async function timeTickLateness(db: Db, boundary: Date): Promise<{ p50: number; p99: number; fired: number }> {
  const { rows } = await sql<{ n: number }>`
    with due as (update workflows set next_tick_at = ${boundary} where mode = 'managed' returning 1) select count(*)::int as n from due
  `.execute(db);
  const offset = boundary.getTime() - Date.now();
  const clock: Clock = { now: () => new Date(Date.now() + offset), sleep: (ms) => new Promise((r) => setTimeout(r, ms)) };
  const { launcher, lateness } = latenessRecorder(clock);
  const deps = benchDeps(db, clock, launcher);
  while (lateness.length < rows[0]!.n && (await fireDueTicks(deps)));
  if (lateness.length !== rows[0]!.n) throw new Error(`fired ${lateness.length} ticks of ${rows[0]!.n}`);
  return { p50: percentile(lateness, 50), p99: percentile(lateness, 99), fired: lateness.length };
}

/** One escalation-clock pass: 5% of the workflows with an open warning, a tenth of those past their deadline. */
export async function timeEscalationPass(db: Db, now: Date): Promise<{ ms: number; escalated: number }> {
  await sql`
    insert into alerts (workflow_id, generation, status, severity, opened_at, escalate_at, cadence_seconds, policy, consecutive_failures,
                        last_error, error_group, error_group_first_at, error_group_last_at, error_group_count, updated_at)
    select id, 999999, 'open', 'warning', ${now}::timestamptz - interval '1 hour',
      case when id % 200 = 20 then ${now}::timestamptz - interval '1 minute' else ${now}::timestamptz + interval '1 day' end,
      300, '{"escalateAfterFailures": 100}', 3, 'connection refused', 'g1', ${now}, ${now}, 3, ${now}
    from workflows where id % 20 = 0
  `.execute(db);
  const deps = benchDeps(db, fixedClock(now));
  const t0 = performance.now();
  await runEscalationClock(deps);
  const ms = performance.now() - t0;
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from alerts where generation = 999999 and severity = 'critical'`.execute(db);
  return { ms, escalated: rows[0]!.n };
}

/** A /metrics scrape (the registry made once, as an app does): median of `times` renders. */
export async function timeScrape(db: Db, now: Date, times = 5): Promise<{ ms: number; text: string }> {
  const metrics = createMetrics({ db, clock: fixedClock(now) });
  await metrics.render();
  const samples: number[] = [];
  let text = '';
  for (let i = 0; i < times; i++) {
    const t0 = performance.now();
    text = await metrics.render();
    samples.push(performance.now() - t0);
  }
  return { ms: median(samples), text };
}
