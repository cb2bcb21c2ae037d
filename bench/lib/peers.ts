import { sql } from 'kysely';
import type { Db } from '../../src/db/connect.js';
import { spawnReplica } from './replica.js';
import { elapsedMs, waitUntil } from './stats.js';

/**
 * The queue peers of the throughput benchmark, each draining `jobs` no-op
 * jobs queued in one bulk statement on the same database, timed from the
 * moment its already-started processes are told to go until no job is left.
 * Settings are the peers' own options, written into bench/results.json.
 */

/** graphile-worker 0.16.6: `processes` instances of `run()`, each with these options. */
export interface GraphileSettings {
  processes: number;
  /** graphile-worker's `concurrency` (the preset's `concurrentJobs`); 1 by default. */
  concurrency?: number;
  /** Its pool size; its docs pair concurrentJobs 24 with maxPoolSize 25. */
  maxPoolSize?: number;
}

/** pg-boss 10: `processes` processes, each with `workers` work() loops fetching and completing `batchSize` jobs at a time. */
export interface PgBossSettings {
  processes: number;
  workers: number;
  batchSize: number;
  pollingIntervalSeconds: number;
}

/**
 * The sweep, from graphile-worker's performance page (concurrentJobs 24,
 * maxPoolSize 25, several instances; its `localQueue` batching arrived in
 * 0.17, after the 0.16 line this project pins) and the defaults for reference.
 */
export const GRAPHILE_SWEEP: Record<'smoke' | 'quick' | 'full', GraphileSettings[]> = {
  smoke: [{ processes: 1, concurrency: 8, maxPoolSize: 9 }],
  quick: [
    { processes: 1 },
    { processes: 1, concurrency: 24, maxPoolSize: 25 },
    { processes: 2, concurrency: 24, maxPoolSize: 25 },
    { processes: 4, concurrency: 24, maxPoolSize: 25 },
    { processes: 2, concurrency: 8, maxPoolSize: 9 },
  ],
  full: [
    { processes: 1 },
    { processes: 1, concurrency: 24, maxPoolSize: 25 },
    { processes: 2, concurrency: 24, maxPoolSize: 25 },
    { processes: 4, concurrency: 24, maxPoolSize: 25 },
    { processes: 2, concurrency: 8, maxPoolSize: 9 },
    { processes: 2, concurrency: 48, maxPoolSize: 49 },
  ],
};

/** pg-boss polls (no LISTEN across processes; 0.5 s is its minimum interval), so its throughput is batches per poll. */
export const PGBOSS_SWEEP: Record<'smoke' | 'quick' | 'full', PgBossSettings[]> = {
  smoke: [{ processes: 1, workers: 2, batchSize: 100, pollingIntervalSeconds: 0.5 }],
  quick: [
    { processes: 1, workers: 4, batchSize: 100, pollingIntervalSeconds: 0.5 },
    { processes: 1, workers: 4, batchSize: 500, pollingIntervalSeconds: 0.5 },
    { processes: 2, workers: 4, batchSize: 500, pollingIntervalSeconds: 0.5 },
  ],
  full: [
    { processes: 1, workers: 4, batchSize: 100, pollingIntervalSeconds: 0.5 },
    { processes: 1, workers: 4, batchSize: 500, pollingIntervalSeconds: 0.5 },
    { processes: 2, workers: 4, batchSize: 500, pollingIntervalSeconds: 0.5 },
    { processes: 2, workers: 8, batchSize: 1000, pollingIntervalSeconds: 0.5 },
  ],
};

export function describeGraphile(s: GraphileSettings): string {
  return s.concurrency ? `${s.processes}×run() concurrency ${s.concurrency} pool ${s.maxPoolSize ?? 10}` : `${s.processes}×run() defaults`;
}

export function describePgBoss(s: PgBossSettings): string {
  return `${s.processes}×${s.workers} work() batch ${s.batchSize} poll ${s.pollingIntervalSeconds}s`;
}

/** Jobs per second for one graphile-worker setting. */
export async function timeGraphile(db: Db, url: string, jobs: number, settings: GraphileSettings): Promise<number> {
  const { makeWorkerUtils, Logger } = await import('graphile-worker');
  const utils = await makeWorkerUtils({ connectionString: url, logger: new Logger(() => () => {}) });
  try {
    await utils.migrate();
    // add_jobs in one call: the bulk path its docs measure (~200,000 jobs/s queued).
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
  const { processes, ...options } = settings;
  return timeProcesses('graphile', url, processes, options, jobs, async () => (await left()) === 0);
}

/** Jobs per second for one pg-boss setting. */
export async function timePgBoss(db: Db, url: string, jobs: number, settings: PgBossSettings): Promise<number> {
  const { default: PgBoss } = await import('pg-boss');
  const boss = new PgBoss({ connectionString: url, max: 2, supervise: false, schedule: false });
  boss.on('error', () => {});
  await boss.start();
  try {
    await boss.createQueue('noop');
    await sql`delete from pgboss.job where name = 'noop'`.execute(db);
    // insert(): its bulk path (one statement per call).
    for (let i = 0; i < jobs; i += 5_000) await boss.insert(Array.from({ length: Math.min(5_000, jobs - i) }, () => ({ name: 'noop', data: {} })));
  } finally {
    await boss.stop({ graceful: false, wait: true });
  }
  const left = async () => (await sql<{ n: number }>`select count(*)::int as n from pgboss.job where name = 'noop' and state < 'completed'`.execute(db)).rows[0]!.n;
  if ((await left()) !== jobs) throw new Error('pg-boss jobs were not queued');
  const { processes, ...options } = settings;
  return timeProcesses('pgboss', url, processes, options, jobs, async () => (await left()) === 0);
}

async function timeProcesses(mode: 'graphile' | 'pgboss', url: string, processes: number, settings: object, jobs: number, drained: () => Promise<boolean>): Promise<number> {
  const procs = Array.from({ length: processes }, () => spawnReplica(mode, { DATABASE_URL: url, BENCH_PEER_SETTINGS: JSON.stringify(settings) }));
  try {
    await Promise.all(procs.map((p) => p.ready));
    const t0 = performance.now();
    await Promise.all(procs.map((p) => p.go()));
    await waitUntil(drained, 600_000, 20, `${mode} jobs done`);
    return jobs / (elapsedMs(t0) / 1000);
  } finally {
    await Promise.all(procs.map((p) => p.stop().catch(() => p.kill())));
  }
}
