import { sql } from 'kysely';
import type { Db } from '../../src/db/connect.js';
import { DEFAULT_RETENTION, runRetentionPass, type RetentionBatch } from '../../src/ledger/retention.js';
import { figure, type BenchContext, type Figure } from './figures.js';
import { seedHistory, vacuumAnalyze } from './history.js';
import { freshDatabase } from './postgres.js';
import { seedTenants, seedWorkflows } from './seed.js';
import { median, round } from './stats.js';

/**
 * The ledger-growth benchmark's second measurement: one retention pass, with
 * the default policy (runs 30 days, settled notifications 30, resolved alerts
 * 180, batches of 5,000), over 40 days of a ledger at `workflows` workflows
 * (a tick every `everyHours`; quick mode thins the cadence, never the month
 * or the workflows): the first pass removes the ten days past the cut-off,
 * then a steady-state pass a day later removes the day that aged out.
 * Database size (pg_database_size, and per table with indexes and TOAST)
 * before, after the pass, after a plain VACUUM, and after ten more days of
 * runs are written into the space it freed; pass duration; each batch
 * timed (a batch is one statement in its own transaction: its duration is
 * the longest any row lock it took was held).
 */
const NAME = 'ledger growth';
const DAYS = 40;
const NOW = new Date('2026-03-10T00:30:00Z');
const TABLES = ['runs', 'alerts', 'alert_events', 'notifications'] as const;
const MB = 2 ** 20;

export async function measureRetentionPass(ctx: BenchContext, s: { workflows: number; everyHours: number }): Promise<Figure[]> {
  const database = await freshDatabase(ctx.adminUrl, 'retention');
  const { db } = database;
  try {
    const tenants = Math.max(1, Math.floor(s.workflows / 100));
    await seedTenants(db, tenants);
    await seedWorkflows(db, { count: s.workflows, tenants, cronSql: sql`${`0 */${s.everyHours} * * *`}` });
    const ticks = (DAYS * 24) / s.everyHours;
    const loaded = await seedHistory(database, { end: NOW, ticks, stepMinutes: s.everyHours * 60, incidentEvery: 20 });
    await vacuumAnalyze(database);
    ctx.log(`  ${NAME}: retention ledger loaded: ${JSON.stringify(loaded)}`);
    const before = await sizes(db);

    const batches: RetentionBatch[] = [];
    let t0 = performance.now();
    const first = await runRetentionPass(db, NOW, DEFAULT_RETENTION, (b) => batches.push(b));
    const firstMs = performance.now() - t0;
    const afterPass = await sizes(db);
    await vacuumAnalyze(database);
    const afterVacuum = await sizes(db);
    ctx.log(`  ${NAME}: retention pass ${JSON.stringify(first)} in ${Math.round(firstMs)} ms`);

    const steadyBatches: RetentionBatch[] = [];
    t0 = performance.now();
    const steady = await runRetentionPass(db, new Date(NOW.getTime() + 86_400_000), DEFAULT_RETENTION, (b) => steadyBatches.push(b));
    const steadyMs = performance.now() - t0;

    // The ten days removed are written again, after NOW: into the space the pass and VACUUM freed.
    await seedHistory(database, { end: new Date(NOW.getTime() + 10 * 86_400_000), ticks: (10 * 24) / s.everyHours, stepMinutes: s.everyHours * 60, runsOnly: true });
    const refilled = await sizes(db);

    const full = batches.filter((b) => b.rows > 0);
    const p = { workflows: s.workflows, tickEveryHours: s.everyHours, days: DAYS, loaded, policy: DEFAULT_RETENTION, removed: first, batchesTimedMs: batches.map((b) => `${b.table}:${b.rows}:${Math.round(b.ms)}`) };
    const mb = (bytes: number) => round(bytes / MB, 0);
    const out: Figure[] = [
      figure(NAME, `retention: runs in a month at ${s.workflows} workflows`, loaded.runs, 'runs', p),
      figure(NAME, 'retention: first pass (10 days aged out)', round(firstMs / 1000, 1), 's', { removed: first }),
      figure(NAME, 'retention: rows removed by the first pass', first.runs + first.notifications + first.alerts, 'rows', { removed: first }),
      figure(NAME, 'retention: longest batch (longest lock held)', round(Math.max(0, ...batches.map((b) => b.ms)), 0), 'ms', { batches: batches.length, batchRows: DEFAULT_RETENTION.batch }),
      figure(NAME, 'retention: median batch', round(median(full.map((b) => b.ms)), 0), 'ms', { batches: full.length }),
      figure(NAME, 'retention: steady-state pass (the next day aged out)', round(steadyMs / 1000, 1), 's', { removed: steady, batches: steadyBatches.map((b) => `${b.table}:${b.rows}:${Math.round(b.ms)}`) }),
      figure(NAME, 'retention: database size before', mb(before.database), 'MB', { tablesMb: mapMb(before.tables) }),
      figure(NAME, 'retention: database size after the pass', mb(afterPass.database), 'MB', { tablesMb: mapMb(afterPass.tables), note: 'deleted rows are dead tuples until vacuumed' }),
      figure(NAME, 'retention: database size after VACUUM', mb(afterVacuum.database), 'MB', {
        tablesMb: mapMb(afterVacuum.tables),
        note: 'plain VACUUM (what autovacuum does) makes the space reusable by new rows without returning it to the operating system',
      }),
      figure(NAME, 'retention: database size after 10 more days of runs', mb(refilled.database), 'MB', {
        tablesMb: mapMb(refilled.tables),
        note: 'as many runs as the first pass removed, written after it and VACUUM: the growth is what the freed space could not take',
      }),
    ];
    return out;
  } finally {
    await database.drop();
  }
}

async function sizes(db: Db): Promise<{ database: number; tables: Record<string, number> }> {
  const { rows } = await sql<{ database: number; runs: number; alerts: number; alertEvents: number; notifications: number }>`
    select pg_database_size(current_database())::float8 as database,
      ${sql.join(
        TABLES.map((t) => sql`pg_total_relation_size(${t}::regclass)::float8 as ${sql.ref(t)}`),
        sql`, `,
      )}
  `.execute(db);
  const r = rows[0]!;
  return { database: r.database, tables: { runs: r.runs, alerts: r.alerts, alert_events: r.alertEvents, notifications: r.notifications } };
}

function mapMb(tables: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(tables).map(([k, v]) => [k, round(v / MB, 1)]));
}
