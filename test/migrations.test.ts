import { afterAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { Migrator, sql } from 'kysely';
import { webhookDestinationId } from '../src/config/destination-schema.js';
import { loadDestinationIdKey } from '../src/ledger/destination-id-key.js';
import { createDb, createPool, DB_TIMEOUTS } from '../src/db/connect.js';
import { migrateDatabase, migrateToLatest } from '../src/db/migrate.js';
import { eventually } from './helpers/eventually.js';
import { withDatabase } from '../src/db/scratch.js';
import { migrations } from '../migrations/index.js';
import { createTestDatabase } from './helpers/db.js';
import { makeRun, makeTenant, makeWorkflow, T0 } from './helpers/factories.js';
import { insertAlert } from './helpers/slack-outbox.js';

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

describe('a replica of an older version', () => {
  it('wait for another replica\'s migrations and run their own past the engine\'s statement limit (30 s), which cancelled a long index build or the wait for the lock on every start', async () => {
    const url = await emptyDatabase();
    const holder = createPool(url, 2);
    const saved = { ...DB_TIMEOUTS };
    // The engine's limits scaled down: a wait of a fraction of a second stands for one of minutes.
    Object.assign(DB_TIMEOUTS, { STATEMENT_TIMEOUT_MS: 200, QUERY_TIMEOUT_MS: 400 });
    const lock = await holder.connect();
    try {
      // Another replica migrating: it holds kysely's migration lock (a session advisory lock).
      await lock.query('select pg_advisory_lock(3853314791062309107)');
      const migrating = migrateDatabase(url);
      const waitedPastLimit = eventually(async () => {
        const { rows } = await holder.query(`select count(*)::int as n from pg_stat_activity where application_name = 'scheduler-bot-migrate' and wait_event_type = 'Lock' and now() - query_start > interval '600 milliseconds'`);
        expect(rows[0].n).toBe(1);
      });
      await Promise.race([waitedPastLimit, migrating]);
      await lock.query('select pg_advisory_unlock(3853314791062309107)');
      const result = await migrating;
      expect(result.results?.map((r) => r.status)).toEqual(Object.keys(migrations).map(() => 'Success'));
    } finally {
      Object.assign(DB_TIMEOUTS, saved);
      lock.release();
      await holder.end();
    }
  });

  it('refuses a database a newer version migrated with a message saying so, naming the migrations it does not know, and changes nothing', async () => {
    const db = createDb(createPool(await emptyDatabase(), 2));
    try {
      await migrateToLatest(db);
      await sql`insert into kysely_migration (name, timestamp) values ('9999_from_a_newer_release', '2026-12-01T00:00:00.000Z')`.execute(db);
      const error = await migrateToLatest(db).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      // Kysely's own words were "corrupted migrations: previously executed migration … is missing": nothing is corrupt.
      expect(error?.message).toMatch(/newer version of scheduler-bot/);
      expect(error?.message).toContain('9999_from_a_newer_release');
      expect(error?.message).not.toMatch(/corrupt/);
      const names = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db);
      expect(names.rows.map((r) => r.name)).toEqual([...Object.keys(migrations), '9999_from_a_newer_release']);
    } finally {
      await db.destroy();
    }
  });
});

describe('0019: webhook destination ids', () => {
  it('rewrites stored webhook:<URL> rows, pending ones included, to the keyed id the engine routes by, with their idempotency keys and outages', async () => {
    const db = createDb(createPool(await emptyDatabase(), 2));
    try {
      const before = await new Migrator({ db, provider: { getMigrations: async () => migrations } }).migrateTo('0018_thread_root_key');
      expect(before.error).toBeUndefined();
      await makeTenant(db);
      const wf = await makeWorkflow(db);
      const alert = await insertAlert(db, wf.id);
      const event = await db.insertInto('alertEvents').values({ alertId: alert.id, at: T0, kind: 'opened', data: '{}' }).returning('id').executeTakeFirstOrThrow();
      const url = 'https://hooks.slack.example.com/services/T0/B0/secrettoken?x=querysecret';
      const row = (destination: string, status: 'pending' | 'sent') => ({
        alertId: alert.id,
        eventId: event.id,
        destination,
        idempotencyKey: `alert:${alert.id}:event:${event.id}:${destination}`,
        status,
        nextAttemptAt: T0,
        createdAt: T0,
      });
      await db.insertInto('notifications').values([row(`webhook:${url}`, 'pending'), row('slack:CACME', 'sent')]).execute();
      await db.insertInto('destinationOutages').values({ destination: `webhook:${url}`, failingSince: T0, failures: 2, heldUntil: T0, lastError: 'HTTP 503' }).execute();

      await migrateToLatest(db);
      const key = await loadDestinationIdKey(db);
      expect(key.length).toBeGreaterThanOrEqual(40);
      const id = webhookDestinationId(url, key);
      const rows = await db.selectFrom('notifications').select(['destination', 'idempotencyKey', 'status']).orderBy('id').execute();
      expect(rows).toEqual([
        { destination: id, idempotencyKey: `alert:${alert.id}:event:${event.id}:${id}`, status: 'pending' },
        { destination: 'slack:CACME', idempotencyKey: `alert:${alert.id}:event:${event.id}:slack:CACME`, status: 'sent' },
      ]);
      expect(await db.selectFrom('destinationOutages').select('destination').execute()).toEqual([{ destination: id }]);
      expect(JSON.stringify(rows)).not.toMatch(/secrettoken|querysecret/);
    } finally {
      await db.destroy();
    }
  });
});

describe('0023: canonical time zones', () => {
  it('rewrites every stored zone typed in another case or as an alias to its canonical name, recorded occurrences included', async () => {
    const db = createDb(createPool(await emptyDatabase(), 2));
    try {
      const before = await new Migrator({ db, provider: { getMigrations: async () => migrations } }).migrateTo('0022_alert_known_failure');
      expect(before.error).toBeUndefined();
      const rule = { cron: '0 1 * * 0', timezone: 'us/pacific', durationMs: 3_600_000 };
      await makeTenant(db, { digest: JSON.stringify({ cron: '0 9 * * 1-5', timezone: 'europe/london' }), maintenance: JSON.stringify([{ ...rule, timezone: 'asia/calcutta' }]) });
      const lower = await makeWorkflow(db, { timezone: 'europe/berlin', maintenance: JSON.stringify([rule]), policy: JSON.stringify({ alertAfter: 2, completeBy: { time: '06:00', timeZone: 'america/new_york' } }) });
      const fine = await makeWorkflow(db, { timezone: 'Europe/Berlin' });
      await db.insertInto('maintenanceWindows').values({ tenantId: 'acme', workflowId: lower.id, startsAt: T0, endsAt: new Date(T0.getTime() + 3_600_000), reason: null, recurrence: '0 1 * * 0|us/pacific|3600000', createdAt: T0 }).execute();

      await migrateToLatest(db);
      const rows = await db.selectFrom('workflows').select(['id', 'timezone', 'maintenance', 'policy']).orderBy('id').execute();
      expect(rows).toEqual([
        { id: lower.id, timezone: 'Europe/Berlin', maintenance: [{ ...rule, timezone: 'America/Los_Angeles' }], policy: { alertAfter: 2, completeBy: { time: '06:00', timeZone: 'America/New_York' } } },
        { id: fine.id, timezone: 'Europe/Berlin', maintenance: [], policy: {} },
      ]);
      const tenant = await db.selectFrom('tenants').select(['digest', 'maintenance']).executeTakeFirstOrThrow();
      expect(tenant).toEqual({ digest: { cron: '0 9 * * 1-5', timezone: 'Europe/London' }, maintenance: [{ ...rule, timezone: 'Asia/Kolkata' }] });
      expect(await db.selectFrom('maintenanceWindows').select('recurrence').execute()).toEqual([{ recurrence: '0 1 * * 0|America/Los_Angeles|3600000' }]);
    } finally {
      await db.destroy();
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
