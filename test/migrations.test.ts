import { afterAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { sql } from 'kysely';
import { createDb, createPool } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { withDatabase } from '../src/db/scratch.js';
import { migrations } from '../migrations/index.js';
import { createTestDatabase } from './helpers/db.js';
import { makeRun, makeTenant, makeWorkflow, T0 } from './helpers/factories.js';

const admin = createPool(inject('pgAdminUrl'), 1);
const created: string[] = [];

async function emptyDatabase() {
  const name = `sbt_empty_${process.pid}_${created.length}_${Date.now().toString(36)}`;
  await admin.query(`create database ${name}`);
  created.push(name);
  return withDatabase(inject('pgAdminUrl'), name);
}

afterAll(async () => {
  for (const name of created) await admin.query(`drop database if exists ${name} with (force)`);
  await admin.end();
});

describe('migrations', () => {
  it('apply to an empty database and find nothing to do the second time', async () => {
    const db = createDb(createPool(await emptyDatabase(), 2));
    try {
      const first = await migrateToLatest(db);
      expect(first.results?.map((r) => r.status)).toEqual(Object.keys(migrations).map(() => 'Success'));
      const second = await migrateToLatest(db);
      expect(second.results).toEqual([]);
      const tables = await sql<{ tablename: string }>`select tablename from pg_tables where schemaname = 'public'`.execute(db);
      expect(tables.rows.map((r) => r.tablename)).toEqual(
        expect.arrayContaining(['tenants', 'workflows', 'runs', 'alerts', 'alert_events', 'notifications', 'alert_threads']),
      );
    } finally {
      await db.destroy();
    }
  });

  it('succeed when two processes migrate the same empty database at once', async () => {
    const url = await emptyDatabase();
    const a = createDb(createPool(url, 2));
    const b = createDb(createPool(url, 2));
    try {
      const [ra, rb] = await Promise.all([migrateToLatest(a), migrateToLatest(b)]);
      const applied = [...(ra.results ?? []), ...(rb.results ?? [])].filter((r) => r.status === 'Success');
      expect(applied).toHaveLength(Object.keys(migrations).length);
    } finally {
      await a.destroy();
      await b.destroy();
    }
  });
});

describe('schema invariants', () => {
  it('allows one original row per tick but any number of retry attempts', async () => {
    const t = await createTestDatabase();
    try {
      await makeTenant(t.db);
      const wf = await makeWorkflow(t.db);
      const original = await makeRun(t.db, { workflowId: wf.id, tick: T0 });
      await expect(makeRun(t.db, { workflowId: wf.id, tick: T0 })).rejects.toThrow(/runs_history/);
      await makeRun(t.db, { workflowId: wf.id, tick: T0, trigger: 'retry', attempt: 2, originalRunId: original.id });
      await makeRun(t.db, { workflowId: wf.id, tick: T0, trigger: 'retry', attempt: 3, originalRunId: original.id });
      const rows = await t.db.selectFrom('runs').select('id').where('workflowId', '=', wf.id).execute();
      expect(rows).toHaveLength(3);
    } finally {
      await t.drop();
    }
  });

  it('allows at most one open alert per workflow', async () => {
    const t = await createTestDatabase();
    try {
      await makeTenant(t.db);
      const wf = await makeWorkflow(t.db);
      const alert = (generation: number, status: 'open' | 'resolved') => ({
        workflowId: wf.id,
        generation,
        status,
        severity: 'warning' as const,
        openedAt: T0,
        cadenceSeconds: 300,
        policy: '{}',
        consecutiveFailures: 3,
        updatedAt: T0,
      });
      await t.db.insertInto('alerts').values(alert(1, 'resolved')).execute();
      await t.db.insertInto('alerts').values(alert(2, 'open')).execute();
      await expect(t.db.insertInto('alerts').values(alert(3, 'open')).execute()).rejects.toThrow(/alerts_one_open_per_workflow/);
    } finally {
      await t.drop();
    }
  });
});
