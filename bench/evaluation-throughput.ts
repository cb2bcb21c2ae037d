import { sql } from 'kysely';
import type { Db } from '../src/db/connect.js';
import { figure, type BenchContext, type Figure } from './lib/figures.js';
import { freshDatabase } from './lib/postgres.js';
import { spawnReplica } from './lib/replica.js';
import { seedTenants, seedWorkflows } from './lib/seed.js';
import { elapsedMs, median, round, waitUntil } from './lib/stats.js';

/**
 * Benchmark 1: runs fully processed per second (claimed, routed, evaluated,
 * alert state and outbox rows written) by 1, 2 and 4 engine replicas, each a
 * process of its own, against graphile-worker draining as many no-op jobs
 * with its default settings on the same database, in the same repeat.
 *
 * The ledger: W workflows (every 5 minutes, alertAfter 2), T = N / W ticks
 * each, arriving interleaved by time; 10% of ticks fail, in one burst of
 * T / 10 per workflow that opens an alert, records more failures (reaching
 * the kept-failing escalation threshold) and resolves on the next success.
 */
const NAME = 'evaluation throughput';
const TICKS = 40;
const SIZES = { smoke: { runs: 400, repeats: 1, replicas: [1, 2] }, quick: { runs: 6_000, repeats: 3, replicas: [1, 2, 4] }, full: { runs: 100_000, repeats: 5, replicas: [1, 2, 4] } };
const BASE = new Date('2026-01-01T00:00:00Z');

export async function evaluationThroughput(ctx: BenchContext): Promise<Figure[]> {
  const size = { ...SIZES[ctx.size], ...(ctx.repeats ? { repeats: ctx.repeats } : {}) };
  const workflows = Math.max(1, Math.round(size.runs / TICKS));
  const runs = workflows * TICKS;
  const burst = TICKS / 10;
  const database = await freshDatabase(ctx.adminUrl, 'throughput');
  const { db, url } = database;
  const env = { DATABASE_URL: url, PLATFORM_CHANNEL: 'CPLATFORM', ESCALATION_INTERVAL_SECONDS: '0.5' };
  try {
    await seedTenants(db, 10);
    await seedWorkflows(db, { count: workflows, tenants: 10, policy: { alertAfter: 2 } });
    const ours = new Map<number, number[]>();
    const peer: number[] = [];
    const ratios: number[] = [];
    const outcomes: Record<string, number>[] = [];
    for (let r = 0; r < size.repeats; r++) {
      for (const n of size.replicas) {
        await loadLedger(db, runs, burst);
        const rate = await timeOurs(db, n, env, runs);
        ours.set(n, [...(ours.get(n) ?? []), rate]);
        if (n === size.replicas[1]) outcomes.push(await countOutcomes(db));
        ctx.log(`  ${NAME}: ${n} replica(s) ${Math.round(rate)} runs/s`);
      }
      const jobs = await timePeer(db, url, runs);
      peer.push(jobs);
      ctx.log(`  ${NAME}: graphile-worker ${Math.round(jobs)} jobs/s`);
      ratios.push(ours.get(2)?.[r] !== undefined ? ours.get(2)![r]! / jobs : ours.get(size.replicas.at(-1)!)![r]! / jobs);
    }
    const params = { runs, workflows, ticksPerWorkflow: TICKS, failureShare: 0.1, repeats: size.repeats, pollBatch: 100, outcomesPerRepeat: outcomes[0] };
    const out: Figure[] = [];
    for (const [n, rates] of ours) out.push(figure(NAME, `runs/s, ${n} replica${n > 1 ? 's' : ''}`, round(median(rates), 0), 'runs/s', { ...params, replicas: n, samples: rates.map((x) => round(x, 0)) }));
    out.push(figure(NAME, 'graphile-worker no-op jobs/s (defaults)', round(median(peer), 0), 'jobs/s', { jobs: runs, repeats: size.repeats, samples: peer.map((x) => round(x, 0)), version: '0.16.6' }));
    out.push(figure(NAME, 'ratio: ours (2 replicas) / peer', round(median(ratios), 2), 'x', { samples: ratios.map((x) => round(x, 2)), measured: 'median of per-repeat ratios' }, '>= 1'));
    return out;
  } finally {
    await database.drop();
  }
}

/** A fresh ledger: no alerts, every run finished and unprocessed, ids in arrival order. */
async function loadLedger(db: Db, runs: number, burst: number): Promise<void> {
  await sql`truncate notifications, alert_threads, alert_events, alerts, runs restart identity`.execute(db);
  // Each workflow's burst starts at a different tick, so failures arrive spread over the whole stream.
  await sql`
    insert into runs (workflow_id, tick, trigger, status, attempt_status, error, attempt_error, started_at, finished_at, processed_at)
    select w.id, ${BASE}::timestamptz + make_interval(mins => 5 * k), 'external', f.status, f.status, f.error, f.error,
      ${BASE}::timestamptz + make_interval(mins => 5 * k), ${BASE}::timestamptz + make_interval(mins => 5 * k, secs => 30), null
    from generate_series(0, ${TICKS - 1}) k
    cross join workflows w
    cross join lateral (
      select case when k - (w.id * 7) % (${TICKS - burst}) between 0 and ${burst - 1} then 'failed' else 'succeeded' end as status
    ) s
    cross join lateral (
      select s.status, case when s.status = 'failed' then 'connection to db-' || (w.id % 5) || ' refused after ' || (k * 13 % 97) || ' ms' end as error
    ) f
    where ${sql.raw('true')}
    order by k, w.id
  `.execute(db);
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from runs where processed_at is null`.execute(db);
  if (rows[0]!.n !== runs) throw new Error(`ledger has ${rows[0]!.n} runs, expected ${runs}`);
}

async function timeOurs(db: Db, replicas: number, env: Record<string, string>, runs: number): Promise<number> {
  const procs = Array.from({ length: replicas }, (_, i) => spawnReplica('engine', { ...env, REPLICA_ID: `bench-${i}` }));
  try {
    await Promise.all(procs.map((p) => p.ready));
    const t0 = performance.now();
    await Promise.all(procs.map((p) => p.go()));
    await waitUntil(async () => (await sql<{ n: number }>`select count(*)::int as n from runs where processed_at is null`.execute(db)).rows[0]!.n === 0, 600_000, 20, 'runs processed');
    return runs / (elapsedMs(t0) / 1000);
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
  }
}

async function countOutcomes(db: Db): Promise<Record<string, number>> {
  const { rows } = await sql<{ kind: string; n: number }>`select kind, count(*)::int as n from alert_events group by kind`.execute(db);
  const notifications = await sql<{ n: number }>`select count(*)::int as n from notifications`.execute(db);
  return { ...Object.fromEntries(rows.map((r) => [r.kind, r.n])), notifications: notifications.rows[0]!.n };
}

async function timePeer(db: Db, url: string, jobs: number): Promise<number> {
  const { makeWorkerUtils, Logger } = await import('graphile-worker');
  const utils = await makeWorkerUtils({ connectionString: url, logger: new Logger(() => () => {}) });
  try {
    await utils.migrate();
    await sql`
      select graphile_worker.add_jobs(array(
        select row('noop', '{}'::json, null, null, null, null, null, null)::graphile_worker.job_spec from generate_series(1, ${jobs})
      ))
    `.execute(db);
  } finally {
    await utils.release();
  }
  const left = async () => (await sql<{ n: number }>`select count(*)::int as n from graphile_worker._private_jobs`.execute(db)).rows[0]!.n;
  if ((await left()) !== jobs) throw new Error('graphile-worker jobs were not queued');
  const worker = spawnReplica('graphile', { DATABASE_URL: url });
  try {
    await worker.ready;
    const t0 = performance.now();
    await worker.go();
    await waitUntil(async () => (await left()) === 0, 600_000, 20, 'graphile-worker jobs done');
    return jobs / (elapsedMs(t0) / 1000);
  } finally {
    await worker.stop();
  }
}
