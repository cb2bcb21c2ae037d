import { sql as raw } from 'kysely';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { createDb, createPool, type Db } from '../../src/db/connect.js';
import { pollFinishedRuns } from '../../src/engine/poller.js';
import { startTestApp } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createEngine, reportRun } from '../helpers/engine-harness.js';
import { makeTenant, makeWorkflow } from '../helpers/factories.js';
import { eventually, fingerprint } from './support.js';

/**
 * The database answers but refuses: its disk is full (SQLSTATE 53100), or it
 * is read-only (25006: a failover to a standby not yet promoted, or
 * `default_transaction_read_only` set for the database). Nobody's data is
 * wrong and it passes: nothing may be lost for it, and a report is refused
 * as "send it again", never as a bug (500).
 */

const ADMIN = 'admin-token-0123456789abcdef';
let t: TestDatabase;
let admin: Db;
beforeAll(async () => {
  t = await createTestDatabase();
  admin = createDb(createPool(inject('pgAdminUrl'), 1));
  await makeTenant(t.db, { id: 'acme', name: 'Acme', channel: 'CACME' });
});
afterAll(async () => {
  await sql(`alter database ${t.name} reset default_transaction_read_only`).catch(() => {});
  await admin?.destroy();
  await t?.drop();
});

const sql = (text: string) => raw.raw(text).execute(admin);

const postReport = (url: string, workflow: string, tick: string, status: 'failed' | 'succeeded' = 'failed') =>
  fetch(`${url}/api/v1/runs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ tenant: 'acme', workflow, status, tick, externalId: `${workflow}:${tick}`, ...(status === 'failed' ? { error: 'boom' } : {}) }),
  });

/** A trigger that answers every insert into `table` as a full disk would. */
async function diskFullOn(table: string): Promise<() => Promise<void>> {
  await raw
    .raw(
      `create or replace function disk_full() returns trigger language plpgsql as $$
       begin raise exception 'could not extend file "base/16384/16385": No space left on device' using errcode = '53100'; end $$;
       create trigger disk_full_${table} before insert on ${table} for each row execute function disk_full();`,
    )
    .execute(t.db);
  return async () => void (await raw.raw(`drop trigger disk_full_${table} on ${table}`).execute(t.db));
}

it('a full disk while a failure is evaluated leaves the run for the next poll; the alert opens once the disk has room', async () => {
  const engine = createEngine(t.db, '2026-03-10T02:05:00Z', { PLATFORM_CHANNEL: '' });
  const wf = await makeWorkflow(t.db, { tenantId: 'acme', name: 'nightly', cron: '0 2 * * *' });
  const run = await reportRun(t.db, wf, new Date('2026-03-10T02:00:00Z'), { status: 'failed', error: 'warehouse unreachable' }, engine.clock.now());
  const room = await diskFullOn('alerts');

  // The batch fails, and so does the run alone: the disk is not the run's fault, so it is not marked processed.
  await expect(pollFinishedRuns(engine.deps)).rejects.toThrow(/No space left/);
  expect((await t.db.selectFrom('runs').select('processedAt').where('id', '=', run.id).executeTakeFirstOrThrow()).processedAt).toBeNull();
  expect(await t.db.selectFrom('alerts').select('id').where('workflowId', '=', wf.id).execute()).toEqual([]);

  await room();
  expect(await pollFinishedRuns(engine.deps)).toBe(true);
  expect(await t.db.selectFrom('alerts').select(['workflowId', 'status']).where('workflowId', '=', wf.id).execute()).toEqual([{ workflowId: wf.id, status: 'open' }]);
});

it('a report refused by a full disk answers 503 with Retry-After, names the reason, and writes nothing', async () => {
  await makeWorkflow(t.db, { tenantId: 'acme', name: 'hourly', cron: '0 * * * *' });
  const app = await startTestApp(t, { API_TOKEN: ADMIN }, { clock: systemClock });
  const room = await diskFullOn('runs');
  try {
    const before = await fingerprint(t.db);
    const refused = await postReport(app.url, 'hourly', '2026-03-10T03:00:00Z');
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await refused.json()).toEqual({ error: 'database_unavailable', reason: 'disk_full', message: expect.stringMatching(/disk is full/) });
    expect(await fingerprint(t.db)).toEqual(before);
  } finally {
    await room();
    await app.stop();
  }
});

it('a database that turns read-only and back: reports get 503 and /readyz says why; the replica recovers by itself, nothing lost or doubled', async () => {
  await makeWorkflow(t.db, { tenantId: 'acme', name: 'daily', cron: '0 4 * * *' });
  const app = await startTestApp(t, { API_TOKEN: ADMIN, POLL_INTERVAL_SECONDS: '1', ESCALATION_INTERVAL_SECONDS: '1' }, { clock: systemClock, loops: true });
  const readyz = async () => {
    const res = await fetch(`${app.url}/readyz`);
    return { status: res.status, body: (await res.json()) as { ready: boolean; database: string } };
  };
  try {
    await eventually(async () => expect((await readyz()).status).toBe(200), 15_000);
    // A failover to a standby not yet promoted, as the sessions see it: every new transaction is read-only.
    await sql(`alter database ${t.name} set default_transaction_read_only = on`);
    await sql(`select pg_terminate_backend(pid) from pg_stat_activity where datname = '${t.name}' and pid <> pg_backend_pid()`);

    // (The first may meet a terminated connection: 503 too, without a reason.)
    await eventually(async () => {
      const r = await postReport(app.url, 'daily', '2026-03-10T04:00:00Z');
      expect(r.status).toBe(503);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await r.json()).toEqual({ error: 'database_unavailable', reason: 'read_only', message: expect.stringMatching(/read-only/) });
    }, 15_000);
    await eventually(async () => {
      const down = await readyz();
      expect(down.status).toBe(503);
      expect(down.body.database).toMatch(/read-only/);
    }, 15_000);

    // Promoted: writable again, and nobody restarts the replica nor ends its sessions.
    await sql(`alter database ${t.name} reset default_transaction_read_only`);
    const accepted = await eventually(async () => {
      const r = await postReport(app.url, 'daily', '2026-03-10T04:00:00Z');
      expect([200, 201]).toContain(r.status);
      return r;
    }, 20_000);
    expect(accepted.status).toBe(201);
    await eventually(async () => expect((await readyz()).status).toBe(200), 20_000);
    const runs = await t.db.selectFrom('runs').innerJoin('workflows', 'workflows.id', 'runs.workflowId').select(['runs.status', 'runs.processedAt']).where('workflows.name', '=', 'daily').execute();
    expect(runs.map((r) => r.status)).toEqual(['failed']);
    await eventually(async () => expect(await t.db.selectFrom('alerts').innerJoin('workflows', 'workflows.id', 'alerts.workflowId').select('alerts.status').where('workflows.name', '=', 'daily').execute()).toEqual([{ status: 'open' }]), 15_000);
  } finally {
    await sql(`alter database ${t.name} reset default_transaction_read_only`);
    await app.stop();
  }
}, 120_000);
