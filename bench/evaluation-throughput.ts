import { sql } from 'kysely';
import type { Db } from '../src/db/connect.js';
import { figure, type BenchContext, type Figure } from './lib/figures.js';
import { freshDatabase } from './lib/postgres.js';
import { spawnReplica } from './lib/replica.js';
import { seedTenants, seedWorkflows } from './lib/seed.js';
import { createFloorTable, timeFloor } from './lib/floor.js';
import { describeGraphile, describePgBoss, GRAPHILE_SWEEP, PGBOSS_SWEEP, timeGraphile, timePgBoss } from './lib/peers.js';
import { elapsedMs, median, round, waitUntil } from './lib/stats.js';

/**
 * Benchmark 1: runs fully processed per second (claimed, routed, evaluated,
 * alert state and outbox rows written) by 1, 2 and 4 engine replicas, each a
 * process of its own, against, in the same repeat and on the same database:
 * the floor (bench/lib/floor.ts: the same claims and as many rows written,
 * one statement a batch, no logic), and the queue peers at their best
 * (bench/lib/peers.ts: a sweep of graphile-worker and pg-boss settings
 * draining as many no-op jobs; the best of each repeat is the peer).
 *
 * The ledger: W workflows (every 5 minutes, alertAfter 2), T = N / W ticks
 * each, arriving interleaved by time; 10% of ticks fail, in one burst of
 * T / 10 per workflow that opens an alert, records more failures (reaching
 * the kept-failing escalation threshold) and resolves on the next success.
 */
const NAME = 'evaluation throughput';
const TICKS = 40;
const FLOOR_CONNECTIONS = [1, 2];
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
  const graphileSweep = GRAPHILE_SWEEP[ctx.size];
  const bossSweep = PGBOSS_SWEEP[ctx.size];
  try {
    await seedTenants(db, 10);
    await seedWorkflows(db, { count: workflows, tenants: 10, policy: { alertAfter: 2 } });
    await createFloorTable(db);
    const ours = new Map<number, number[]>();
    const floor = new Map<number, number[]>();
    const graphile = graphileSweep.map(() => [] as number[]);
    const boss = bossSweep.map(() => [] as number[]);
    const ratios = { graphile: [] as number[], boss: [] as number[], floor: [] as number[], floor1: [] as number[] };
    const outcomes: Record<string, number>[] = [];
    const rowsPerRun: number[] = [];
    for (let r = 0; r < size.repeats; r++) {
      for (const n of size.replicas) {
        await loadLedger(db, runs, burst);
        const rate = await timeOurs(db, n, env, runs);
        ours.set(n, [...(ours.get(n) ?? []), rate]);
        if (n === 2) {
          const outcome = await countOutcomes(db);
          outcomes.push(outcome);
          rowsPerRun.push((outcome.alerts! + outcome.events! + outcome.notifications!) / runs);
        }
        ctx.log(`  ${NAME}: ${n} replica(s) ${Math.round(rate)} runs/s`);
      }
      for (const c of FLOOR_CONNECTIONS) {
        await loadLedger(db, runs, burst);
        const rate = await timeFloor(db, c, rowsPerRun[r]!);
        floor.set(c, [...(floor.get(c) ?? []), rate]);
        ctx.log(`  ${NAME}: floor, ${c} connection(s) ${Math.round(rate)} runs/s`);
      }
      for (const [i, s] of graphileSweep.entries()) {
        graphile[i]!.push(await timeGraphile(db, url, runs, s));
        ctx.log(`  ${NAME}: graphile-worker ${describeGraphile(s)} ${Math.round(graphile[i]!.at(-1)!)} jobs/s`);
      }
      for (const [i, s] of bossSweep.entries()) {
        boss[i]!.push(await timePgBoss(db, url, runs, s));
        ctx.log(`  ${NAME}: pg-boss ${describePgBoss(s)} ${Math.round(boss[i]!.at(-1)!)} jobs/s`);
      }
      // Within the repeat: ours at 2 replicas against the best setting of each peer in this repeat, and against the floor.
      const ours2 = ours.get(2)![r]!;
      ratios.graphile.push(ours2 / Math.max(...graphile.map((g) => g[r]!)));
      ratios.boss.push(ours2 / Math.max(...boss.map((b) => b[r]!)));
      ratios.floor.push(ours2 / floor.get(2)![r]!);
      ratios.floor1.push(ours.get(1)![r]! / floor.get(1)![r]!);
    }
    const params = { runs, workflows, ticksPerWorkflow: TICKS, failureShare: 0.1, repeats: size.repeats, pollBatch: 100, outcomesPerRepeat: outcomes[0] };
    const samples = (xs: number[], digits = 0) => xs.map((x) => round(x, digits));
    const spread = (xs: number[], digits = 0) => ({ min: round(Math.min(...xs), digits), max: round(Math.max(...xs), digits) });
    const out: Figure[] = [];
    for (const [n, rates] of ours) out.push(figure(NAME, `runs/s, ${n} replica${n > 1 ? 's' : ''}`, round(median(rates), 0), 'runs/s', { ...params, replicas: n, samples: samples(rates), spread: spread(rates) }));
    for (const [c, rates] of floor) {
      out.push(figure(NAME, `floor runs/s, ${c} connection${c > 1 ? 's' : ''}`, round(median(rates), 0), 'runs/s', { connections: c, batch: 100, statementsPerBatch: 1, rowsPerRun: samples(rowsPerRun, 2), samples: samples(rates), spread: spread(rates) }));
    }
    const peerFigures = <S extends object>(peer: string, version: string, sweep: S[], rates: number[][], describe: (s: S) => string) => {
      const medians = rates.map((x) => median(x));
      const best = medians.indexOf(Math.max(...medians));
      const sweepOut = sweep.map((s, i) => ({ settings: s, label: describe(s), median: round(medians[i]!, 0), samples: samples(rates[i]!) }));
      out.push(figure(NAME, `${peer} no-op jobs/s (best of sweep)`, round(medians[best]!, 0), 'jobs/s', { jobs: runs, repeats: size.repeats, version, best: sweepOut[best], sweep: sweepOut }));
    };
    peerFigures('graphile-worker', '0.16.6', graphileSweep, graphile, describeGraphile);
    const defaults = graphileSweep.findIndex((s) => s.concurrency === undefined);
    if (defaults >= 0) out.push(figure(NAME, 'graphile-worker no-op jobs/s (defaults)', round(median(graphile[defaults]!), 0), 'jobs/s', { jobs: runs, repeats: size.repeats, samples: samples(graphile[defaults]!), version: '0.16.6' }));
    peerFigures('pg-boss', '10.4.2', bossSweep, boss, describePgBoss);
    const ratio = (name: string, xs: number[], target?: string) =>
      out.push(figure(NAME, name, round(median(xs), 2), 'x', { samples: samples(xs, 2), spread: spread(xs, 2), measured: 'median of per-repeat ratios; each repeat against the best peer setting of that repeat' }, target));
    ratio('ratio: ours (2 replicas) / best graphile-worker', ratios.graphile, '>= 1');
    ratio('ratio: ours (2 replicas) / best pg-boss', ratios.boss);
    ratio('ratio: ours (2 replicas) / floor (2 connections)', ratios.floor, '>= 0.5');
    ratio('ratio: ours (1 replica) / floor (1 connection)', ratios.floor1);
    return out;
  } finally {
    await database.drop();
  }
}

/** A fresh ledger: no alerts, every run finished and unprocessed, ids in arrival order. */
async function loadLedger(db: Db, runs: number, burst: number): Promise<void> {
  await sql`truncate notifications, alert_threads, alert_events, alerts, runs restart identity cascade`.execute(db);
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
  const alerts = await sql<{ n: number }>`select count(*)::int as n from alerts`.execute(db);
  const events = rows.reduce((sum, r) => sum + r.n, 0);
  return { ...Object.fromEntries(rows.map((r) => [r.kind, r.n])), events, notifications: notifications.rows[0]!.n, alerts: alerts.rows[0]!.n };
}
